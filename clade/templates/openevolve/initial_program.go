// The coffee's temperature over time: reads minutes t on standard input, prints degrees C for each.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
)

// EVOLVE-BLOCK-START
// A straight line: hot at the start, a fixed loss per minute.
func temperature(t float64) float64 {
	start := 85.0
	lossPerMinute := 2.0
	return start - lossPerMinute*t
}
// EVOLVE-BLOCK-END

func main() {
	words := bufio.NewScanner(os.Stdin)
	words.Split(bufio.ScanWords)
	for words.Scan() {
		t, err := strconv.ParseFloat(words.Text(), 64)
		if err != nil {
			os.Exit(2)
		}
		fmt.Println(temperature(t))
	}
}
