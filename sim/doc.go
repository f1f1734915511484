// Package sim simulates prediction markets for research: market designs
// priced in integer shares and kopecks by the same lmsr functions the
// server calls, traders with private information, the measures a study
// needs (the market maker's P&L, calibration, price error, arbitrage left),
// and parameter sweeps run in parallel.
//
// A run is a Config: a Design (Binary, Pool or LS), the number of outcomes,
// the liquidity b, the platform's fee (Margin), a trader Mix and a seed.
// Run draws a true distribution over the outcomes and the winner from it,
// gives every informed trader a noisy private signal of the truth, and lets
// randomly chosen traders trade for Steps steps. The same Config always
// gives the same Result, bit for bit.
//
// Sweep runs a grid of Configs, each Runs times, on a pool of workers. The
// seed of every run is derived from the sweep's seed and the run's (point,
// run) indices alone, so the output does not depend on the number of
// workers. WriteSweepCSV, WriteSummaryCSV and WritePathCSV write the
// results as tidy CSV.
//
// docs/simulation.md describes every design, agent and metric exactly.
package sim
