#!/usr/bin/env python3
"""Pairs two arena results files by deal: did B's setting do better than A's on the same deals?

    scripts/arena-pair.py bench/arena/experiments/all_fives-100k-s17a-default.jsonl NEW.jsonl

Both files must be runs of the same seed (the same deals), the second typically the same
command with one master option changed. A deal is games 2k and 2k + 1 (the bots swap
seats); only deals complete in both files count. Prints, for each file, its share of the
games won on those deals, then the mean of the per-deal differences (second minus first)
in win share and in points margin a deal (the arena's unit: both games' points), each with
its 95% half-width (1.96 standard errors: deals are the independent samples, and a paired
run has hundreds of them).
"""
import json
import math
import sys


def deals(path):
    games = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            row = json.loads(line)
            if "game" in row:
                games[row["game"]] = row["result"]
    by_deal = {}
    for game, result in games.items():
        by_deal.setdefault(game // 2, []).append(result)
    return {
        deal: (sum(r["score_a"] for r in rs) / 2, sum(r["points_a"] for r in rs))
        for deal, rs in by_deal.items()
        if len(rs) == 2
    }


def mean_and_half_width(xs):
    n = len(xs)
    m = sum(xs) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1)) if n > 1 else 0.0
    return m, 1.96 * sd / math.sqrt(n)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    first, second = deals(sys.argv[1]), deals(sys.argv[2])
    common = sorted(set(first) & set(second))
    if len(common) < 2:
        sys.exit("fewer than two deals complete in both files")
    for path, d in ((sys.argv[1], first), (sys.argv[2], second)):
        share = sum(d[k][0] for k in common) / len(common)
        print(f"{path}: {100 * share:.1f}% of the games on these deals")
    wins = mean_and_half_width([second[k][0] - first[k][0] for k in common])
    points = mean_and_half_width([second[k][1] - first[k][1] for k in common])
    print(
        f"second - first over {len(common)} deals: wins {100 * wins[0]:+.1f}% ± {100 * wins[1]:.1f}, "
        f"margin {points[0]:+.1f} ± {points[1]:.1f} points a deal"
    )


if __name__ == "__main__":
    main()
