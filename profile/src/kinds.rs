//! The profile's enumerated fields, written as the words earlier versions wrote, so that every
//! older profile still reads. The source language is the contract's enum
//! (`instrument_contract::Language`), written by name.

use serde::{Deserialize, Serialize};

/// Where the probes were placed when the program was built.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Placement {
    /// Before inlining: every source routine; compiled code changed by the probes.
    #[serde(rename = "early")]
    Early,
    /// After optimisation: the plain build's code, inlined routines inside their callers.
    #[serde(rename = "late")]
    Late,
    /// Modules differ.
    #[serde(rename = "early and late")]
    Mixed,
}

/// The clock the probes read.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClockSource {
    /// The invariant time-stamp counter.
    Tsc,
    /// clock_gettime(CLOCK_MONOTONIC).
    Monotonic,
}

/// How probe costs were estimated for compensation.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// Unfenced probes and the paper's start-up calibration (what profiles without a strategy
    /// used).
    #[default]
    Calibrated,
    /// Serialized probes (a fixed cost everywhere) and the start-up calibration.
    Fenced,
    /// Unfenced probes; hot events' costs measured in place, the calibration for the others.
    #[serde(rename = "inplace")]
    InPlace,
}

/// What an in-place estimate's counted pair cost was measured against
/// (`InPlaceCost::counted_reference`): the path whose own cost no window sees, so the part of
/// `counted_ns` that is modelled rather than measured.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CountedReference {
    /// No window measured it: the calibrated counted pair.
    #[default]
    Calibration,
    /// A callpath parent kept on the stack untimed while it waits: its pathed pair scaled from
    /// its timed-minus-pathed difference (no counted call to measure against).
    Pathed,
    /// The event's own inline count (inline windows against counted ones), plus the inline
    /// count's calibration scaled as the measured part moved from its own.
    Inline,
    /// A bare count (bare windows against shadow ones), plus the dispatch scaled likewise.
    Bare,
    /// The tally path (tally windows against counted ones), plus the switched-off pair's
    /// calibration scaled likewise.
    Tally,
}

/// What a timeline series counts per bucket.
#[cfg_attr(feature = "arbitrary", derive(arbitrary::Arbitrary))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Metric {
    /// Time spent in the event itself.
    #[serde(rename = "exclusive_ns")]
    ExclusiveNs,
    /// Calls made.
    #[serde(rename = "calls")]
    Calls,
}

/// `instrument_contract::Language` by name (`""` for unknown, as version 2 wrote it). A name
/// this tool does not know reads as unknown: the times of a routine matter more than its label.
pub(crate) mod language {
    use instrument_contract::Language;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(language: &Language, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(language.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Language, D::Error> {
        let name = String::deserialize(d)?;
        Ok(Language::from_name(&name).unwrap_or_default())
    }

    pub fn is_unknown(language: &Language) -> bool {
        *language == Language::Unknown
    }

    #[cfg(feature = "arbitrary")]
    pub fn arbitrary(u: &mut arbitrary::Unstructured) -> arbitrary::Result<Language> {
        u.choose(&[Language::Unknown, Language::C, Language::Cxx, Language::Fortran, Language::Rust]).copied()
    }
}

/// Each enum's words, as the profile writes them (and reports print them).
macro_rules! names {
    ($($kind:ident { $($variant:ident => $name:literal),* })*) => {$(
        impl $kind {
            pub fn name(self) -> &'static str {
                match self { $($kind::$variant => $name),* }
            }
        }

        impl std::fmt::Display for $kind {
            fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    )*};
}

names! {
    Placement { Early => "early", Late => "late", Mixed => "early and late" }
    ClockSource { Tsc => "tsc", Monotonic => "monotonic" }
    Strategy { Calibrated => "calibrated", Fenced => "fenced", InPlace => "inplace" }
    Metric { ExclusiveNs => "exclusive_ns", Calls => "calls" }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words a profile holds are the names reports print.
    #[test]
    fn written_words_are_the_names() {
        let word = |v: serde_json::Value| v.as_str().unwrap().to_string();
        for p in [Placement::Early, Placement::Late, Placement::Mixed] {
            assert_eq!(word(serde_json::to_value(p).unwrap()), p.name());
        }
        for c in [ClockSource::Tsc, ClockSource::Monotonic] {
            assert_eq!(word(serde_json::to_value(c).unwrap()), c.name());
        }
        for s in [Strategy::Calibrated, Strategy::Fenced, Strategy::InPlace] {
            assert_eq!(word(serde_json::to_value(s).unwrap()), s.name());
        }
        for m in [Metric::ExclusiveNs, Metric::Calls] {
            assert_eq!(word(serde_json::to_value(m).unwrap()), m.name());
        }
    }
}
