//! Run-time settings from the environment. A value that cannot be used is reported in one line
//! on stderr and the default is kept: a setting never changes how the program itself ends.

/// The number in `name`, if set; `None` (after one line on stderr) when it is not a whole number
/// of at least `min`.
pub fn number(name: &str, min: u64, default: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    match text.trim().parse::<u64>() {
        Ok(n) if n >= min => Some(n),
        _ => {
            eprintln!("instrument: {name}={text:?} is not a whole number of at least {min}; using {default}");
            None
        }
    }
}

/// One line on stderr for a value of `name` that is not one of `expected`.
pub fn unknown(name: &str, value: &str, expected: &str, default: &str) {
    eprintln!("instrument: {name}={value:?} is not {expected}; using {default}");
}
