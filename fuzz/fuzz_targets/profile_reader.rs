//! Any bytes given as a profile: the reader accepts them or returns an error, and whatever it
//! accepts renders.
#![no_main]

#[path = "render_all.rs"]
mod render_all;

use instrument_profile::Profile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(profile) = Profile::from_json(text) {
        render_all::render_all(&profile);
    }
});
