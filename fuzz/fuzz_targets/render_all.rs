//! Every report and export of one profile: an error is fine, a panic is a bug.

use instrument_report::callpaths::{self, Threads};
use instrument_report::export::{self, Format};
use instrument_report::report;
use instrument_report::view::View;
use instrument_report::{html, timeline, tree};
use instrument_profile::Profile;

pub fn render_all(profile: &Profile) {
    for view in [View::Raw, View::Compensated] {
        let _ = report::table(profile, true, view);
        let _ = report::rows(profile, view);
        let _ = tree::render(profile, &tree::TreeOptions { focus: None, lines: true, view });
        let _ = html::profile_page(profile, view);
        for format in [Format::Folded, Format::Speedscope, Format::Pprof] {
            let _ = export::render(profile, format, Threads::Merged, view);
        }
        let _ = export::tau::files(std::slice::from_ref(profile), view);
    }
    let _ = report::json(profile);
    if let Ok(rows) = callpaths::table(profile, None, Threads::Merged) {
        for view in [View::Raw, View::Compensated, View::Measured] {
            let _ = callpaths::render_table(profile, &rows, view);
        }
    }
    let _ = callpaths::render_cct(profile, Threads::Merged, View::Raw);
    let _ = callpaths::render_cct(profile, Threads::One(0), View::Compensated);
    let _ = timeline::sparklines(profile);
    let _ = timeline::svg(profile);
}
