//! The workspace's library crate: instrumented like the binary that uses it.

#[inline(never)]
pub fn fib(n: u64) -> u64 {
    if n < 2 {
        n
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

#[inline(never)]
fn divide(a: u64, b: u64) -> u64 {
    if b == 0 {
        panic!("division by zero");
    }
    a / b
}

/// Panics for 0, through two instrumented frames.
#[inline(never)]
pub fn checked(n: u64) -> u64 {
    divide(100, n) + 1
}

#[cfg(test)]
mod tests {
    #[test]
    fn fib_of_ten() {
        assert_eq!(super::fib(10), 55);
    }
}
