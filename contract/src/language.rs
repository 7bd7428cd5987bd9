//! Source languages, as the module table codes them and as profiles name them.

use crate::table::{FLAG_FORTRAN, LANGUAGE_MASK, LANGUAGE_SHIFT};

/// A routine's source language; the discriminant is its code in the table's flags.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Language {
    #[default]
    Unknown = 0,
    C = 1,
    Cxx = 2,
    Fortran = 3,
    Rust = 4,
}

impl Language {
    const ALL: [Language; 5] =
        [Language::Unknown, Language::C, Language::Cxx, Language::Fortran, Language::Rust];

    /// The name profiles give it (`""` when unknown).
    pub fn name(self) -> &'static str {
        match self {
            Language::Unknown => "",
            Language::C => "c",
            Language::Cxx => "c++",
            Language::Fortran => "fortran",
            Language::Rust => "rust",
        }
    }

    /// The language a profile names (`name`'s inverse); None for a name it never gives.
    pub fn from_name(name: &str) -> Option<Language> {
        Language::ALL.into_iter().find(|l| l.name() == name)
    }

    /// `FunctionEntry::flags` bits for it: the language code, and `FLAG_FORTRAN` for older
    /// readers.
    pub fn flags(self) -> u32 {
        let fortran = if self == Language::Fortran { FLAG_FORTRAN } else { 0 };
        ((self as u32) << LANGUAGE_SHIFT) | fortran
    }

    /// The language a routine's flags name; tables from before the language bits only mark
    /// Fortran.
    pub fn of_flags(flags: u32) -> Language {
        let code = ((flags >> LANGUAGE_SHIFT) & LANGUAGE_MASK) as usize;
        match Language::ALL.get(code) {
            Some(Language::Unknown) | None if flags & FLAG_FORTRAN != 0 => Language::Fortran,
            Some(language) => *language,
            None => Language::Unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_round_trip_and_old_tables_still_mark_fortran() {
        for language in Language::ALL {
            assert_eq!(Language::of_flags(language.flags() | crate::table::FLAG_LATE), language);
        }
        assert_eq!(Language::of_flags(FLAG_FORTRAN), Language::Fortran);
        assert_eq!(Language::of_flags(15 << LANGUAGE_SHIFT), Language::Unknown);
        assert_eq!(Language::C.flags(), 1 << LANGUAGE_SHIFT);
        assert_eq!(Language::Fortran.flags(), (3 << LANGUAGE_SHIFT) | FLAG_FORTRAN);
        assert_eq!(Language::Unknown.flags(), 0);
        assert_eq!(Language::Cxx.name(), "c++");
        for language in Language::ALL {
            assert_eq!(Language::from_name(language.name()), Some(language));
        }
        assert_eq!(Language::from_name("cobol"), None);
    }
}
