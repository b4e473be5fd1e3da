// Six circles in the unit square: prints one circle a line, `x y r` (centre and radius).
package main

import "fmt"

const circles = 6

// EVOLVE-BLOCK-START
// Equal circles on a grid: three columns, two rows.
func pack(n int) [][3]float64 {
	columns := 3
	rows := 2.0
	radius := 0.15
	out := make([][3]float64, 0, n)
	for k := 0; k < n; k++ {
		x := (float64(k%columns) + 0.5) / float64(columns)
		y := (float64(k/columns) + 0.5) / rows
		out = append(out, [3]float64{x, y, radius})
	}
	return out
}
// EVOLVE-BLOCK-END

func main() {
	for _, c := range pack(circles) {
		fmt.Printf("%.12f %.12f %.12f\n", c[0], c[1], c[2])
	}
}
