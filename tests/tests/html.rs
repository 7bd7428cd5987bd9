//! The HTML report, loaded in headless Chromium: its scripts build the sortable tables from the
//! embedded data, the program graph and the flame graph are there, and nothing is fetched.

use instrument_driver::experiment::results::{Level, Trial};
use instrument_driver::experiment::stats;
use instrument_tests::*;
use std::path::Path;
use std::process::Command;

fn report_html(args: &[&str], out: &Path) {
    let output = run(Command::new(bin("instrument")).arg("report").arg("--html").arg(out).args(args));
    assert_success(&output, "report --html");
}

/// The rows of the table a section holds, as text cells.
fn rows(dom: &str, section: &str) -> Vec<Vec<String>> {
    let start =
        dom.find(&format!("id=\"section-{section}\"")).unwrap_or_else(|| panic!("no {section} in {dom}"));
    let body = &dom[start..];
    let body = &body[body.find("<tbody>").expect("a rendered table") + 7..];
    let body = &body[..body.find("</tbody>").unwrap()];
    body.split("<tr>")
        .skip(1)
        .map(|row| {
            row.split("<td")
                .skip(1)
                .map(|c| {
                    let c = &c[c.find('>').unwrap() + 1..];
                    c[..c.find("</td>").unwrap()].to_string()
                })
                .collect()
        })
        .collect()
}

/// The page references nothing outside itself.
fn assert_self_contained(html: &str) {
    for external in ["src=\"http", "href=\"http", "src=\"//", "@import", "url(http"] {
        assert!(!html.contains(external), "the page loads {external}...");
    }
}

#[test]
fn profile_page_renders_sortable_tables_graph_flame_graph_and_compensation() {
    let dir = scratch();
    let program =
        build_instrumented(dir.path(), "callpaths", &["--instrument-events=functions,loops,callsites"]);
    let output = run(Command::new(&program)
        .current_dir(dir.path())
        .env("INSTRUMENT_PROFILE_DIR", dir.path())
        .env("INSTRUMENT_CALLPATH", "2")
        .env("INSTRUMENT_COMPENSATE", "on"));
    assert_success(&output, "callpaths");
    let page = dir.path().join("report.html");
    let cwd_report = Command::new(bin("instrument"))
        .current_dir(dir.path())
        .args(["report", "--html"])
        .arg(&page)
        .output()
        .unwrap();
    assert_success(&cwd_report, "report --html (newest profile)");
    let html = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&html);

    let dom = chromium_dom(&page, "#sort=calls");
    assert!(dom.contains("data-ready=\"true\""), "the page's script ran");
    let routines = rows(&dom, "routines");
    assert_eq!(routines.len(), 8, "{routines:?}");
    assert_eq!(
        (routines[0][0].as_str(), routines[0][3].as_str()),
        ("cmp", "17"),
        "sorted by calls from #sort=calls"
    );
    assert_eq!((routines[1][0].as_str(), routines[1][3].as_str()), ("c", "16"));
    // Names are text cells, which wrap instead of pushing the number columns off the page.
    assert!(dom.contains("<td class=\"text\">main</td>"), "a routine's name cell");
    assert!(html.contains("td.text { white-space: normal; overflow-wrap: anywhere;"));
    assert!(rows(&dom, "loops").iter().any(|r| r[0] == "loop at callpaths.c:42 in main"));
    assert!(rows(&dom, "callsites").iter().any(|r| r[0] == "call qsort at callpaths.c:40 in main"));
    assert!(rows(&dom, "callpaths").iter().any(|r| r[0].starts_with("main =&gt; ")), "callpaths rendered");
    assert_eq!(rows(&dom, "threads").len(), 3, "main thread and two workers");
    assert!(dom.contains("id=\"section-compensation\"") && dom.contains("Probe time removed"));
    let graph = &dom[dom.find("id=\"section-graph\"").unwrap()..];
    assert!(graph.contains("<details open=\"\"><summary>") && graph.contains("main — "), "program graph");
    assert!(graph.contains("calling contexts"), "the graph of a callpath recording is its contexts'");
    assert!(!dom.contains("This profile is flat"), "a callpath recording's flame graph has its stacks");
    assert!(dom.contains("<object class=\"flame\" type=\"image/svg+xml\""));
    assert!(dom.contains("data=\"data:image/svg+xml;base64,"), "the flame graph is inside the page");
}

#[test]
fn experiment_page_renders_table_1_and_the_chart() {
    let dir = scratch();
    let trial = |level, trial, ms: f64| Trial {
        program: "ep.W".into(),
        level,
        trial,
        main_ns: Some(ms * 1e6),
        ranks_ns: Vec::new(),
        error: None,
        control_ns: None,
    };
    let trials = vec![
        trial(Level::Mo, 0, 100.0),
        trial(Level::Mo, 1, 102.0),
        trial(Level::Pa, 0, 150.0),
        trial(Level::Pa, 1, 160.0),
        trial(Level::PaComp, 0, 101.0),
        trial(Level::PaComp, 1, 103.0),
    ];
    let summaries = stats::summarize(&["ep.W".into()], &[Level::Mo, Level::Pa, Level::PaComp], &trials);
    std::fs::write(dir.path().join("results.json"), serde_json::to_string(&summaries).unwrap()).unwrap();
    let page = dir.path().join("experiment.html");
    report_html(&["--experiment", dir.path().to_str().unwrap()], &page);
    assert_self_contained(&std::fs::read_to_string(&page).unwrap());

    let dom = chromium_dom(&page, "");
    let table = rows(&dom, "table1");
    assert_eq!(table[0], ["ep.W", "min", "100000", "150000", "101000"]);
    assert_eq!(table[1], ["ep.W", "mean", "101000", "155000", "102000"]);
    assert_eq!(table[2][3..], ["50.0 : 53.5", "1.0 : 1.0"]);
    // Two standard errors in ms, as % of MO's mean 101 ms: MO's own 2 * 1 (2.0 %); PA
    // 2 * sqrt(1 + 25) = 10.20 (10.1 %); PA-comp 2 * sqrt(1 + 1) = 2.83 (2.8 %).
    assert_eq!(table[3], ["ep.W", "noise (±2 s.e.)", "±2.0", "±10.1", "±2.8"]);
    let chart = &dom[dom.find("id=\"section-chart\"").unwrap()..];
    assert!(chart.contains("<svg") && chart.contains("<title>ep.W PA: 50.00 %</title>"), "{chart}");
    assert!(!dom.contains("section-table2"), "Table 2 only for MPI programs");
}

#[test]
fn experiment_page_renders_table_2_for_mpi_programs() {
    let dir = scratch();
    let trial = |level, trial, ms: [f64; 2]| Trial {
        program: "cg-mpi.W".into(),
        level,
        trial,
        main_ns: Some(ms[0] * 1e6),
        ranks_ns: ms.iter().map(|m| m * 1e6).collect(),
        error: None,
        control_ns: None,
    };
    let trials = vec![
        trial(Level::Mo, 0, [100.0, 90.0]),
        trial(Level::Mo, 1, [110.0, 80.0]),
        trial(Level::Pa, 0, [120.0, 85.0]),
        trial(Level::Pa, 1, [115.0, 95.0]),
    ];
    let summaries = stats::summarize(&["cg-mpi.W".into()], &[Level::Mo, Level::Pa], &trials);
    std::fs::write(dir.path().join("results.json"), serde_json::to_string(&summaries).unwrap()).unwrap();
    let page = dir.path().join("experiment.html");
    report_html(&["--experiment", dir.path().to_str().unwrap()], &page);
    let table = rows(&chromium_dom(&page, ""), "table2");
    // Per-rank minima: MO 100 and 80, PA 115 and 85 (+15 % and +6.25 %).
    assert_eq!(table[0], ["cg-mpi.W (2 ranks)", "min (high)", "100000", "115000"]);
    assert_eq!(table[1], ["cg-mpi.W (2 ranks)", "min (low)", "80000", "85000"]);
    assert_eq!(table[2][3..], ["10.6 : 15.0"]);
}

#[test]
fn html_report_refuses_a_directory_without_results() {
    let dir = scratch();
    let output = Command::new(bin("instrument"))
        .args(["report", "--html", "x.html", "--experiment"])
        .arg(dir.path())
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot read") && stderr.contains("results.json"), "{stderr}");
    assert!(!dir.path().join("x.html").exists(), "nothing written");
}

#[test]
fn a_flat_profiles_page_says_its_flame_graph_is_one_frame_deep() {
    let dir = scratch();
    let program = build_instrumented(dir.path(), "calls", &[]);
    let (output, _) = run_profiled(&program, dir.path());
    assert_success(&output, "calls");
    let page = dir.path().join("flat.html");
    report_html(&[only_profile_path(dir.path()).to_str().unwrap()], &page);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("This profile is flat") && html.contains("INSTRUMENT_CALLPATH=all"));
    assert!(html.contains("Program graph (program &gt; routine"), "the static graph");
}
