//! Text helpers both parsers use.

pub fn parse_int(text: &str) -> Option<i64> {
    let t = text.trim();
    let t = t
        .strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .unwrap_or(t)
        .trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d.trim()),
        None => (false, t),
    };
    let v = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        i64::from_str_radix(hex.trim_end_matches(['u', 'U', 'l', 'L']), 16).ok()?
    } else {
        digits
            .trim_end_matches(['u', 'U', 'l', 'L'])
            .parse::<i64>()
            .ok()?
    };
    Some(if neg { -v } else { v })
}

/// Splits `text` at `sep` where no bracket of `open`/`close` is open.
pub fn split_top(text: &str, sep: char, open: char, close: char) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    for c in text.chars() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
        }
        if c == sep && depth == 0 {
            parts.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    parts.push(current);
    parts
}
