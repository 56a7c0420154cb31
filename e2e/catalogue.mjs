// The scenario catalogue as the core declares it (`idem_sim::ScenarioId`), for the
// tests that list or count scenarios: `e2e/scenarios.json`, which the Rust test
// `fragments_are_fresh` writes from the catalogue (and fails when it was stale).

import { readFileSync } from 'node:fs';

const list = JSON.parse(readFileSync(new URL('./scenarios.json', import.meta.url), 'utf8'));

/** Every scenario id, in the picker's order. */
export const SCENARIOS = list.map((s) => s.id);

/** The seed scenarios ("the four scenarios" of the picker), in order. */
export const SEED_SCENARIOS = list.filter((s) => s.group === 'seed').map((s) => s.id);
