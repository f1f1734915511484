package growth_test

import (
	"fmt"

	"github.com/predictkit/predictkit/growth"
)

// The default rules: a user's level from their lifetime trade volume, and
// whether a referred user's volume qualifies their referrer for the
// reward (paid once, the first time it does).
func Example() {
	r := growth.DefaultRules()
	for _, volume := range []int64{0, 99_999, 100_000, 2_500_000, 500_000_000} {
		fmt.Printf("%d kopecks: level %d\n", volume, r.Level(volume))
	}
	fmt.Println("90,000 qualifies:", r.Qualified(90_000))
	fmt.Println("120,000 qualifies:", r.Qualified(120_000))
	fmt.Println("reward:", r.RewardKopecks, "kopecks")
	// Output:
	// 0 kopecks: level 1
	// 99999 kopecks: level 1
	// 100000 kopecks: level 2
	// 2500000 kopecks: level 3
	// 500000000 kopecks: level 5
	// 90,000 qualifies: false
	// 120,000 qualifies: true
	// reward: 10000 kopecks
}
