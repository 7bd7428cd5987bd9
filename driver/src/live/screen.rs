//! The full-screen view of `instrument top`: the busiest routines and loops of the last
//! interval, refreshed in place; arrows select a row, space switches its probes off or on.

use super::args::TopArgs;
use super::columns::{cells, shown_rows, title, HEADINGS};
use super::control::Switcher;
use super::rows::{rows, Row};
use super::snapshot::{Reader, Snapshot};
use anyhow::Result;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind};
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Style, Stylize};
use ratatui::widgets::{Paragraph, Row as TableRow, Table, TableState};
use ratatui::{DefaultTerminal, Frame};
use std::time::{Duration, Instant};

const HELP: &str = " q quit   ↑↓ select   space switch the selected probe off/on   r routines only/all";

struct View {
    previous: Option<Snapshot>,
    shown: Vec<Row>,
    title: String,
    /// The selected event's id, kept across refreshes that reorder the rows.
    selected: Option<u32>,
    routines_only: bool,
    switcher: Switcher,
    message: String,
}

pub fn run(reader: &mut Reader, args: &TopArgs) -> Result<()> {
    let mut terminal = ratatui::init();
    let result = watch(&mut terminal, reader, args);
    ratatui::restore();
    result
}

fn watch(terminal: &mut DefaultTerminal, reader: &mut Reader, args: &TopArgs) -> Result<()> {
    let mut view = View {
        previous: None,
        shown: Vec::new(),
        title: String::new(),
        selected: None,
        routines_only: args.routines,
        switcher: Switcher::default(),
        message: String::new(),
    };
    let interval = Duration::from_secs_f64(args.interval);
    loop {
        refresh(&mut view, reader, args)?;
        let next = Instant::now() + interval;
        loop {
            draw(terminal, &view)?;
            let left = next.saturating_duration_since(Instant::now());
            if left.is_zero() || !event::poll(left)? {
                break;
            }
            let Event::Key(key) = event::read()? else { continue };
            if key.kind != KeyEventKind::Press {
                continue;
            }
            match key.code {
                KeyCode::Char('q') | KeyCode::Esc => return Ok(()),
                KeyCode::Up | KeyCode::Char('k') => move_selection(&mut view, -1),
                KeyCode::Down | KeyCode::Char('j') => move_selection(&mut view, 1),
                KeyCode::Char(' ') | KeyCode::Enter => toggle(&mut view, reader),
                KeyCode::Char('r') => {
                    view.routines_only = !view.routines_only;
                    break;
                }
                _ => {}
            }
        }
    }
}

fn refresh(view: &mut View, reader: &mut Reader, args: &TopArgs) -> Result<()> {
    let start_ns = reader.segment.header().start_ns.load(std::sync::atomic::Ordering::Relaxed);
    let snapshot = reader.take()?;
    view.switcher.settle(&reader.segment, &snapshot);
    let fit = terminal_rows().saturating_sub(4);
    let all = rows(&reader.names, &reader.labels, &snapshot, view.previous.as_ref(), start_ns);
    view.shown = shown_rows(all, view.routines_only, args.rows.unwrap_or(fit));
    view.title = title(reader, &snapshot);
    if view.selected.is_none() {
        view.selected = view.shown.first().map(|r| r.id);
    }
    view.previous = Some(snapshot);
    Ok(())
}

fn terminal_rows() -> usize {
    ratatui::crossterm::terminal::size().map_or(24, |(_, rows)| rows as usize)
}

fn selected_index(view: &View) -> Option<usize> {
    view.shown.iter().position(|r| Some(r.id) == view.selected)
}

fn move_selection(view: &mut View, step: isize) {
    let last = view.shown.len().saturating_sub(1) as isize;
    let at = selected_index(view).map_or(0, |i| (i as isize + step).clamp(0, last) as usize);
    view.selected = view.shown.get(at).map(|r| r.id);
}

fn toggle(view: &mut View, reader: &Reader) {
    let Some(row) = selected_index(view).map(|i| view.shown[i].clone()) else { return };
    let now = super::snapshot::monotonic_ns();
    if row.mode == "on" {
        view.switcher.off(&reader.segment, &[row.id], now);
        view.message = format!("switching off {} (it finishes its open calls first)", row.name);
    } else {
        view.switcher.on(&reader.segment, &[row.id]);
        view.message = format!("switched on {}", row.name);
    }
}

fn draw(terminal: &mut DefaultTerminal, view: &View) -> Result<()> {
    terminal.draw(|frame| render(frame, view))?;
    Ok(())
}

/// One screen: the title, the table with the selected row reversed, a message, the keys.
fn render(frame: &mut Frame, view: &View) {
    let [head, body, status, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    frame.render_widget(Paragraph::new(format!(" instrument top: {}", view.title)).bold(), head);
    let widths = [
        Constraint::Length(7),
        Constraint::Length(10),
        Constraint::Length(10),
        Constraint::Length(12),
        Constraint::Length(10),
        Constraint::Length(8),
        Constraint::Fill(1),
    ];
    let rows = view.shown.iter().map(|r| TableRow::new(cells(r)));
    let table = Table::new(rows, widths)
        .header(TableRow::new(HEADINGS).style(Style::new().bold().underlined()))
        .row_highlight_style(Style::new().reversed());
    let mut state = TableState::default().with_selected(selected_index(view));
    frame.render_stateful_widget(table, body, &mut state);
    frame.render_widget(Paragraph::new(format!(" {}", view.message)), status);
    frame.render_widget(Paragraph::new(HELP).dim(), foot);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::rows::What;
    use ratatui::backend::TestBackend;
    use ratatui::style::Modifier;
    use ratatui::Terminal;

    fn row(id: u32, name: &str, share: f64, calls: u64, mode: &'static str) -> Row {
        Row {
            id,
            what: What::Routine,
            name: name.into(),
            calls,
            counted: 0,
            calls_per_s: calls as f64 / 2.0,
            exclusive_s: share / 100.0 * 2.0,
            inclusive_s: 2.0,
            share,
            mode,
            open: 0,
        }
    }

    #[test]
    fn the_screen_shows_the_title_the_rows_the_selection_message_and_keys() {
        let view = View {
            previous: None,
            shown: vec![row(3, "work", 91.5, 40000, "on"), row(1, "main", 8.5, 1, "counted")],
            title: "pid 42, 1 thread, 2.0 s".into(),
            selected: Some(1),
            routines_only: false,
            switcher: Switcher::default(),
            message: "switching off main (it finishes its open calls first)".into(),
        };
        let (width, height) = (100, 7);
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal.draw(|frame| render(frame, &view)).unwrap();
        let buffer = terminal.backend().buffer();
        let line =
            |y: u16| (0..width).map(|x| buffer[(x, y)].symbol()).collect::<String>().trim_end().to_string();
        insta::assert_snapshot!((0..height).map(line).collect::<Vec<_>>().join("\n"));
        let reversed = |y: u16| buffer[(0, y)].modifier.contains(Modifier::REVERSED);
        assert_eq!((reversed(2), reversed(3)), (false, true), "the selected row (main) is highlighted");
    }
}
