//! Structured profiles (every field arbitrary: counts, times and names in every combination
//! JSON could hold): each one the reader would accept (`validate`) renders or errs.
#![no_main]

#[path = "render_all.rs"]
mod render_all;

use instrument_profile::Profile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|profile: Profile| {
    if profile.validate().is_ok() {
        render_all::render_all(&profile);
    }
});
