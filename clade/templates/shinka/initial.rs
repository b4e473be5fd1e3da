// Six circles in the unit square: prints one circle a line, `x y r` (centre and radius).
const CIRCLES: usize = 6;

// EVOLVE-BLOCK-START
// Equal circles on a grid: three columns, two rows.
fn pack(n: usize) -> Vec<(f64, f64, f64)> {
    let columns = 3;
    let rows = 2.0;
    let radius = 0.15;
    let mut circles = Vec::new();
    for k in 0..n {
        let x = ((k % columns) as f64 + 0.5) / columns as f64;
        let y = ((k / columns) as f64 + 0.5) / rows;
        circles.push((x, y, radius));
    }
    circles
}
// EVOLVE-BLOCK-END

fn main() {
    for (x, y, r) in pack(CIRCLES) {
        println!("{:.12} {:.12} {:.12}", x, y, r);
    }
}
