//! What a control of the page's markup does: its `data-act`, as a type. The markup
//! writers name an action by its variant (`Act::Play.name()`, `Act::Play.selector()`),
//! and the page's one listener ([`super::listen`]) parses the attribute once into an
//! [`Act`] and matches on it, so a misspelt action does not compile. It imports
//! nothing: every module that writes or reads controls can use it.

macro_rules! acts {
    ($($(#[$doc:meta])* $v:ident = $name:literal,)*) => {
        /// A control's action, from its `data-act` attribute.
        #[derive(Clone, Copy, PartialEq, Eq, Debug)]
        pub enum Act {
            $($(#[$doc])* $v,)*
        }

        impl Act {
            /// Every action.
            pub const ALL: [Act; [$($name),*].len()] = [$(Act::$v),*];

            /// The value of its `data-act` attribute.
            pub const fn name(self) -> &'static str {
                match self {
                    $(Act::$v => $name,)*
                }
            }

            /// The CSS selector of its controls: `[data-act=<name>]`.
            pub const fn selector(self) -> &'static str {
                match self {
                    $(Act::$v => concat!("[data-act=", $name, "]"),)*
                }
            }
        }
    };
}

acts! {
    // Playback.
    Back = "back",
    Play = "play",
    Step = "step",
    End = "end",
    Restart = "restart",
    Speed = "speed",
    Scrub = "scrub",
    /// The sequence diagram also draws the steps to come.
    Future = "future",
    // Faults.
    Ack = "ack",
    Parallel = "parallel",
    ParallelN = "parallel-n",
    Crash = "crash",
    H1 = "h1",
    H25 = "h25",
    /// A number of the client's retry policy (`data-retry`: which).
    Retry = "retry",
    // The scenario's switches, the lab's head, the page's header and notices.
    Toggle = "toggle",
    Copy = "copy",
    Scenario = "scenario",
    Lang = "lang",
    Dismiss = "dismiss",
    /// The first screen's Try it button.
    Try = "try",
    // The Explore panel (the worker's markup writes `xshow` links).
    Explore = "explore",
    XCancel = "xcancel",
    XShow = "xshow",
    /// The switches of two sets of defences side by side.
    Cmp = "cmp",
    // The lesson: the question, the progress.
    Check = "check",
    Continue = "continue",
    Clear = "clear",
    Predict = "predict",
}

impl Act {
    /// The action named `name`.
    pub fn parse(name: &str) -> Option<Act> {
        Act::ALL.into_iter().find(|a| a.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_action_has_one_name_and_its_selector() {
        for a in Act::ALL {
            assert_eq!(Act::parse(a.name()), Some(a));
            assert_eq!(a.selector(), format!("[data-act={}]", a.name()));
        }
        assert_eq!(Act::parse("nope"), None);
    }

    /// Every `data-act` the sources write as text (the worker's markup, prose, tests)
    /// is an action the listener knows.
    #[test]
    fn every_data_act_in_the_sources_is_an_action() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut seen = 0;
        for dir in ["src", "worker/src"] {
            let mut stack = vec![root.join(dir)];
            while let Some(d) = stack.pop() {
                for e in std::fs::read_dir(&d).unwrap() {
                    let p = e.unwrap().path();
                    if p.is_dir() {
                        stack.push(p);
                        continue;
                    }
                    let src = std::fs::read_to_string(&p).unwrap_or_default();
                    for (i, _) in src.match_indices("data-act=") {
                        let rest = src[i + 9..].trim_start_matches(['\\', '"']);
                        let name: String = rest
                            .chars()
                            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                            .collect();
                        // `data-act={}` / `data-act=\"{act}\"`: a name filled in.
                        if name.is_empty() {
                            continue;
                        }
                        seen += 1;
                        assert!(Act::parse(&name).is_some(), "{}: {name}", p.display());
                    }
                }
            }
        }
        assert!(seen > 0);
    }
}
