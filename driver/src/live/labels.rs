//! The display names of a live program's events, read once from its segment's name table.

use instrument_live::EventName;
use instrument_report::names::{location, readable};

/// The display name of every event (routines demangled), by id; None for hidden ones.
pub fn display_names(names: &[EventName]) -> Vec<Option<String>> {
    let routine = |id: u32| match names.get(id as usize) {
        Some(EventName::Function { name, .. }) => readable(name),
        _ => "?".to_string(),
    };
    names
        .iter()
        .map(|event| match event {
            EventName::Function { name, .. } => Some(readable(name)),
            EventName::Loop { function, file, line } => {
                Some(format!("loop at {} in {}", location(file, *line), routine(*function)))
            }
            EventName::CallSite { function, callee, file, line } => Some(format!(
                "call {} at {} in {}",
                readable(callee),
                location(file, *line),
                routine(*function)
            )),
            EventName::Hidden => None,
        })
        .collect()
}
