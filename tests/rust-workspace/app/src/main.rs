//! Known call structure: parse 100 calls (from parse_all, 1 call), mathlib::fib(15) 1973 calls
//! in the dev profile, a panic caught with catch_unwind inside mathlib::checked, then after();
//! ryu's float formatting (`ryu::pretty::format64`, too large to inline) 150 times, as the
//! crates.io dependency whose routine the tests find in the profile (itoa's are all inlined).

#[inline(never)]
fn parse(s: &str) -> u64 {
    s.parse().unwrap_or(0)
}

#[inline(never)]
fn parse_all(items: &[String]) -> u64 {
    items.iter().map(|s| parse(s)).sum()
}

#[inline(never)]
fn after() -> &'static str {
    "done"
}

fn main() {
    std::panic::set_hook(Box::new(|_| {}));
    let items: Vec<String> = (0..100).map(|i| itoa::Buffer::new().format(i).to_string()).collect();
    let sum = parse_all(&items);
    let halves: usize = (0..100).map(|i| ryu::Buffer::new().format(i as f64 * 0.5).len()).sum();
    let thirds: usize =
        (0..50).map(|i| ryu::Buffer::new().format(std::hint::black_box(i as f64 / 3.0)).len()).sum();
    std::hint::black_box(halves + thirds);
    let caught = std::panic::catch_unwind(|| mathlib::checked(0)).is_err();
    let fib = mathlib::fib(15);
    println!("sum {sum} fib {fib} caught {caught} user_cfg {} {}", cfg!(from_user), after());
    std::process::exit(if caught { 3 } else { 0 });
}
