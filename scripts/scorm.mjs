// `make scorm`: the release build in dist/ as a SCORM 1.2 package,
// target/scorm/idempotency-lab.zip — every file of dist/ plus imsmanifest.xml at the
// zip's root: one organization, one item, one SCO launching index.html. The SCO's
// run-time side is scorm.js (see its header); this only packs.
//
//   node scripts/scorm.mjs            (after make build; needs `zip`, installed by setup.sh)

import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { assertDistBuilt, DIST, distFiles, REPO } from '../e2e/dist.mjs';

const OUT = path.join(REPO, 'target', 'scorm');
const STAGE = path.join(OUT, 'package');
const ZIP = path.join(OUT, 'idempotency-lab.zip');

const version = readFileSync(path.join(REPO, 'Cargo.toml'), 'utf8').match(/^version = "([^"]+)"/m)[1];
const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The SCORM 1.2 manifest (IMS Content Packaging 1.1.2 with ADL's adlcp extension). */
export function manifest(files) {
  return `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="idempotency-lab" version="${esc(version)}"
    xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2"
    xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2"
    xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
    xsi:schemaLocation="http://www.imsproject.org/xsd/imscp_rootv1p1p2 imscp_rootv1p1p2.xsd http://www.imsglobal.org/xsd/imsmd_rootv1p2p1 imsmd_rootv1p2p1.xsd http://www.adlnet.org/xsd/adlcp_rootv1p2 adlcp_rootv1p2.xsd">
  <metadata>
    <schema>ADL SCORM</schema>
    <schemaversion>1.2</schemaversion>
  </metadata>
  <organizations default="idempotency-lab-org">
    <organization identifier="idempotency-lab-org">
      <title>Idempotency Lab</title>
      <item identifier="idempotency-lab-item" identifierref="idempotency-lab-sco" isvisible="true">
        <title>Idempotency Lab: retries and idempotency</title>
      </item>
    </organization>
  </organizations>
  <resources>
    <resource identifier="idempotency-lab-sco" type="webcontent" adlcp:scormtype="sco" href="index.html">
${files.map((f) => `      <file href="${esc(f)}"/>`).join('\n')}
    </resource>
  </resources>
</manifest>
`;
}

assertDistBuilt();
rmSync(OUT, { recursive: true, force: true });
mkdirSync(STAGE, { recursive: true });
cpSync(DIST, STAGE, { recursive: true });
writeFileSync(path.join(STAGE, 'imsmanifest.xml'), manifest(distFiles()));
// -X: no extra file attributes (uid/gid, extended timestamps): only what an LMS reads.
execFileSync('zip', ['-q', '-X', '-r', ZIP, '.'], { cwd: STAGE, stdio: 'inherit' });
console.log(`scorm: ${path.relative(REPO, ZIP)} (${distFiles().length} files of dist/ and imsmanifest.xml)`);
