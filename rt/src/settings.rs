//! Run-time settings, read through their declarations in the contract crate
//! (`instrument_contract::settings`). A value that cannot be used is reported in one line on
//! stderr and the default is kept: a setting never changes how the program itself ends.

pub use instrument_contract::settings::*;

/// A `Flag` setting: `None` when unset, or after one line on stderr when it is bad.
pub fn flag(setting: &Setting) -> Option<bool> {
    kept(setting, setting.flag())
}

/// A `Number` setting, likewise.
pub fn number(setting: &Setting) -> Option<u64> {
    kept(setting, setting.number())
}

/// A `Choice` setting, likewise.
pub fn choice(setting: &Setting) -> Option<&'static str> {
    kept(setting, setting.choice())
}

/// The run settings in the environment at start-up, for the profile.
static IN_EFFECT: std::sync::OnceLock<std::collections::BTreeMap<String, String>> =
    std::sync::OnceLock::new();

/// Notes the run settings set now (at start-up: a program may change its environment later).
pub fn remember() {
    IN_EFFECT.get_or_init(|| {
        ALL.iter()
            .filter(|s| s.scope == Scope::Run)
            .filter_map(|s| Some((s.name.to_owned(), s.raw()?)))
            .collect()
    });
}

/// The run settings that were set when the program started (`remember`).
pub fn in_effect() -> std::collections::BTreeMap<String, String> {
    IN_EFFECT.get().cloned().unwrap_or_default()
}

/// One line on stderr for `bad`, a value of `setting` that its reader could not use.
pub fn report(setting: &Setting, bad: &BadValue) {
    eprintln!("instrument: {bad}; using the default ({})", setting.default);
}

fn kept<T>(setting: &Setting, value: Result<Option<T>, BadValue>) -> Option<T> {
    value.unwrap_or_else(|bad| {
        report(setting, &bad);
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_declared_defaults_are_the_ones_the_runtime_uses() {
        let rule = instrument_contract::throttle::DEFAULT;
        assert_eq!(THROTTLE_CALLS.default, rule.calls.to_string());
        assert_eq!(THROTTLE_PERCALL_US.default, rule.per_call_us.to_string());
        assert_eq!(STACK_FRAMES.default, crate::thread::DEFAULT_FRAMES.to_string());
        assert_eq!(CALLPATH_NODES.default, crate::callpath::DEFAULT_NODES.to_string());
        assert_eq!(RECALIBRATE_MS.default, crate::recalibrate::DEFAULT_PERIOD_MS.to_string());
    }
}
