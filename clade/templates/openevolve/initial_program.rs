// The coffee's temperature over time: reads minutes t on standard input, prints degrees C for each.
use std::io::Read;

// EVOLVE-BLOCK-START
// A straight line: hot at the start, a fixed loss per minute.
fn temperature(t: f64) -> f64 {
    let start = 85.0;
    let loss_per_minute = 2.0;
    start - loss_per_minute * t
}
// EVOLVE-BLOCK-END

fn main() {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).expect("standard input");
    for word in input.split_whitespace() {
        let t: f64 = word.parse().expect("a number");
        println!("{}", temperature(t));
    }
}
