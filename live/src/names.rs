//! Event names in the segment: one line per event id, in id order, appended at each module's
//! registration. Fields are separated by tabs (tabs and newlines inside names become spaces):
//!
//! - `F name file line` a routine,
//! - `L function file line` a loop of routine id `function`,
//! - `C function callee file line` a call statement in routine id `function`,
//! - `H name` an event of the runtime itself (calibration), never shown.

use std::io::Write;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventName {
    Function { name: String, file: String, line: u32 },
    Loop { function: u32, file: String, line: u32 },
    CallSite { function: u32, callee: String, file: String, line: u32 },
    Hidden,
}

/// Appends `event`'s line to `out`.
pub fn write_name_line(out: &mut Vec<u8>, event: &EventName) {
    let clean = |s: &str| s.replace(['\t', '\n'], " ");
    let _ = match event {
        EventName::Function { name, file, line } => {
            writeln!(out, "F\t{}\t{}\t{line}", clean(name), clean(file))
        }
        EventName::Loop { function, file, line } => writeln!(out, "L\t{function}\t{}\t{line}", clean(file)),
        EventName::CallSite { function, callee, file, line } => {
            writeln!(out, "C\t{function}\t{}\t{}\t{line}", clean(callee), clean(file))
        }
        EventName::Hidden => writeln!(out, "H"),
    };
}

/// Reads the complete lines of `text`, one event per line in id order. A line that cannot be
/// read becomes `Hidden`, so later ids keep their place.
pub fn parse_names(text: &[u8]) -> Vec<EventName> {
    let text = String::from_utf8_lossy(text);
    text.split_terminator('\n').map(parse_line).collect()
}

fn parse_line(line: &str) -> EventName {
    let fields: Vec<&str> = line.split('\t').collect();
    let number = |s: &str| s.parse::<u32>().ok();
    let parsed = match fields.as_slice() {
        ["F", name, file, line] => number(line).map(|line| EventName::Function {
            name: name.to_string(),
            file: file.to_string(),
            line,
        }),
        ["L", function, file, line] => number(function)
            .zip(number(line))
            .map(|(function, line)| EventName::Loop { function, file: file.to_string(), line }),
        ["C", function, callee, file, line] => number(function).zip(number(line)).map(|(function, line)| {
            EventName::CallSite { function, callee: callee.to_string(), file: file.to_string(), line }
        }),
        _ => None,
    };
    parsed.unwrap_or(EventName::Hidden)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_in_id_order() {
        let events = [
            EventName::Function { name: "main\twith tab".into(), file: "a.c".into(), line: 3 },
            EventName::Loop { function: 0, file: "a.c".into(), line: 5 },
            EventName::CallSite { function: 0, callee: "sqrt".into(), file: "a.c".into(), line: 6 },
            EventName::Hidden,
        ];
        let mut text = Vec::new();
        for event in &events {
            write_name_line(&mut text, event);
        }
        let parsed = parse_names(&text);
        assert_eq!(parsed.len(), 4);
        assert_eq!(
            parsed[0],
            EventName::Function { name: "main with tab".into(), file: "a.c".into(), line: 3 }
        );
        assert_eq!(&parsed[1..], &events[1..]);
    }

    #[test]
    fn a_bad_line_keeps_its_place() {
        let parsed = parse_names(b"X\tjunk\nF\tf\tf.c\t1\nF\tpartial\n");
        assert_eq!(parsed.len(), 3);
        assert_eq!((&parsed[0], &parsed[2]), (&EventName::Hidden, &EventName::Hidden));
        assert!(matches!(parsed[1], EventName::Function { .. }));
    }
}
