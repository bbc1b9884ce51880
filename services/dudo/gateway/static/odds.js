// The odds guide's arithmetic (help.js): pure, so Node can check it.

/** P(at least k successes in n draws of chance p). */
export function atLeast(k, n, p) {
  let total = 0;
  let term = (1 - p) ** n; // P(X = 0)
  for (let i = 0; i <= n; i++) {
    if (i >= k) total += term;
    term = (term * (n - i) * p) / ((i + 1) * (1 - p));
  }
  return Math.min(1, Math.max(0, total));
}
