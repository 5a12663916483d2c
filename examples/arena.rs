//! Arena: two bot levels play whole matches against each other on duplicate deals.
//!
//! `cargo run --release --example arena -- --preset all_fives --a expert --b greedy --matches 2000`
//!
//! `--matches N` is the number of games (matches) played. Deals come in pairs: games `2k`
//! and `2k + 1` use the same seed, so the same deals, with the two bots swapping seats (A
//! at the even seats in game `2k`, at the odd seats in game `2k + 1`); an odd N plays the
//! last deal once. A match is a whole game to the preset's target or number of rounds.
//! With more than two seats A holds every even seat and B every odd one, and A wins a
//! game when any of its seats (or its team) wins it.
//!
//! The last line is `A vs B: <rate>% [<low>, <high>] over N matches (...)`: A's share of
//! the games won, a drawn game counting half, with its 95% interval from the deals (A's
//! share of each deal's games, by Student's t: a deal's two games share their hands, so
//! the deals are the independent samples, as for the margin), and for comparison the
//! Wilson interval that treats every game as independent. The line before
//! it is the duplicate margin: A's final points minus B's over each deal's two games (the
//! other way round under penalty scoring), its mean a deal with a 95% Student-t interval
//! (`domino_server::margin`), and about how many deals it takes for that interval to
//! leave 0 at this mean and spread. When an expert or a master plays, earlier lines give
//! its time per move (measured here, around the bot's call).
//!
//! The master does a fixed amount of work a move (`--master-work`, moves applied in its
//! search, deterministic) unless `--master-ms` gives it a time budget on the wall clock.
//! `--teams` plays four seats as two teams (seats 0 and 2, A, against 1 and 3, B).
//! `--forced-at-once` lets a searching bot with one legal move play it without thinking:
//! the same moves, no search for a forced one (37% to 46% of a master's decisions in
//! all_fives and block); its games are not those of a run without it (the bots'
//! randomness is used differently).
//!
//! `--results FILE` keeps every finished game in FILE, one JSON line each after a first
//! line naming the run. Started again with the same file and arguments (any `--threads`
//! or `--matches`), a run plays only the games not in it and reports over all of them: a
//! game's deals and the bots' randomness depend only on the seed and its index, so a run
//! at a fixed work (not `--master-ms`), stopped and resumed in as many pieces as it
//! takes, reports what one sitting would have; its times are of the last sitting's games. A file of another run is
//! refused. The file does not know the build: resume a run with the build that began it.
//!
//! `--pair-with FILE` also reports this run less another results file of the same seed
//! and table (typically the same command with one master option changed), paired by deal:
//! the mean difference in A's share of a deal's games and in its margin, each with its 95%
//! interval, over the deals complete in both. With `--matches` at most the games already
//! in `--results` it plays nothing: `--matches 866` pairs the first 433 deals.

use std::io::Write;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use domino_server::bots::{Clock, Thinking, master};

use clap::Parser;
use domino_server::bots::{self, Level, expert};
use domino_server::engine::rules::Scoring;
use domino_server::engine::rules::default_hand_size;
use domino_server::engine::{Game, Move, Outcome, Preset, Rules, Seed};
use domino_server::margin::{margin, t_975};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

#[derive(Parser, Debug, Clone, serde::Serialize)]
#[command(about = "Two bot levels play duplicate matches; prints A's win rate with a 95% interval")]
struct Args {
    /// Preset (classic, block, draw, all_fives, muggins, penalty).
    #[arg(long, value_parser = |s: &str| Preset::from_str(s).map_err(|e| e.message))]
    preset: Preset,
    /// Level of bot A.
    #[arg(long)]
    a: Level,
    /// Level of bot B.
    #[arg(long)]
    b: Level,
    /// Games to play (each deal is played twice, the bots swapping seats).
    #[arg(long, default_value_t = 200)]
    matches: usize,
    /// Seats at the table (2 to 4).
    #[arg(long, default_value_t = 2)]
    seats: u8,
    /// Seed text for the deals and the bots' randomness.
    #[arg(long, default_value = "arena")]
    seed: String,
    /// Play with the double-N set instead of the preset's (hand size: that set's default).
    #[arg(long)]
    max_pip: Option<u8>,
    /// Worker threads (timings are cleanest with 1).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Expert: rollouts per decision (default: the built-in budget).
    #[arg(long)]
    rollouts: Option<u32>,
    /// Expert: bonus for a rollout that wins the match (default: the built-in one).
    #[arg(long)]
    match_bonus: Option<f64>,
    /// Four seats as two teams (0 and 2 against 1 and 3).
    #[arg(long)]
    teams: bool,
    /// A master or an expert with a single legal move plays it without searching: the
    /// same move, in less time (the service always searches, so that its timing does not
    /// tell). The bots' randomness then differs from a run without it.
    #[arg(long)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    forced_at_once: bool,
    /// Master: moves applied in its search per decision (fixed work, deterministic).
    #[arg(long, default_value_t = master::DEFAULT_WORK)]
    master_work: u64,
    /// Master: think by the wall clock for this many milliseconds instead.
    #[arg(long)]
    master_ms: Option<u64>,
    /// Master: plies searched before a greedy playout.
    #[arg(long)]
    depth: Option<u8>,
    /// Master: moves searched at a node below the root.
    #[arg(long)]
    beam: Option<u8>,
    /// Master: tiles left in the hands for the exact endgame search.
    #[arg(long)]
    endgame: Option<u8>,
    /// Master: `tree` (information-set tree search) or `alpha-beta` (in each world) before
    /// the exact endgame.
    #[arg(long)]
    method: Option<String>,
    /// Master: the tree search's UCB exploration constant.
    #[arg(long)]
    exploration: Option<f64>,
    /// Master: playouts weigh the next seat's best reply by this (0 with a block bonus of
    /// 0: greedy playouts; default: the master's own, 1).
    #[arg(long)]
    defend: Option<f64>,
    /// Master: points a playout's play is worth for leaving the next seat no play
    /// (default: the master's own, `master::BLOCK_BONUS` at two seats where no play
    /// scores, else 0).
    #[arg(long)]
    block_bonus: Option<f64>,
    /// Master: how much less likely a sampled world is for each point its other seats would
    /// have left on the table, or each pip they could have shed more with `--shed on`
    /// (default: the master's own, `master::SHED_SHARPNESS` at two seats where no play
    /// scores, else 0.1).
    #[arg(long)]
    inference: Option<f64>,
    /// Master: the playouts value the match from the scores a round leaves, as a race in
    /// rounds of this many points (0: the round's points alone; default: the master's
    /// own, `master::RACE` at two seats under fives scoring).
    #[arg(long)]
    equity: Option<f64>,
    /// Master: with the race, the spread of a round's lead in it (default: the master's
    /// own, `master::RACE`'s).
    #[arg(long)]
    spread: Option<f64>,
    /// Master: with the race, how much the round's own points count beside the match's
    /// equity (default: the master's own, 1; 0: the match alone).
    #[arg(long)]
    points_weight: Option<f64>,
    /// Master: `paired` (the tree's root tries every candidate in every world, the best
    /// mean played) or `ucb` (one candidate a world by UCB, the most visited played);
    /// default: the master's own for the table (`master::PAIRED` at two seats under fives).
    #[arg(long)]
    root: Option<String>,
    /// Master: `on` (where no play scores, the others' plays are evidence by the pips they
    /// shed) or `off`; default: the master's own for the table (`master::SHED` at two
    /// seats where no play scores).
    #[arg(long)]
    shed: Option<String>,
    /// Keep each finished game in this file, and play only the games it does not hold yet.
    #[arg(long)]
    results: Option<PathBuf>,
    /// Another results file of the same seed, preset and table (typically the same run
    /// with one master option changed): also report this run less that one, paired by deal.
    #[arg(long)]
    pair_with: Option<PathBuf>,
}

impl Args {
    /// What decides the games' results: every argument given a value but how many games
    /// are played, on how many threads, and where they are kept. An option left unset is
    /// left out, so a new option (unset: the build's own behaviour) does not change the
    /// identity of the runs before it.
    fn run_identity(&self) -> serde_json::Value {
        let mut run = serde_json::to_value(self).expect("the arguments are JSON");
        let fields = run.as_object_mut().expect("an object");
        fields.retain(|name, value| {
            !value.is_null()
                && !["matches", "threads", "results", "pair_with"].contains(&name.as_str())
        });
        run
    }
}

/// The wall clock, for a master thinking by the clock.
struct Wall(Instant);

impl Clock for Wall {
    fn now(&self) -> Duration {
        self.0.elapsed()
    }
}

fn master_config(args: &Args) -> master::Config {
    let mut c = master::Config::for_table(&table_rules(args), args.seats);
    if let Some(d) = args.depth {
        c.depth = d;
    }
    if let Some(b) = args.beam {
        c.beam = b;
    }
    if let Some(e) = args.endgame {
        c.endgame = e;
    }
    if let Some(b) = args.match_bonus {
        c.match_bonus = b;
    }
    match args.method.as_deref() {
        None => {}
        Some("tree") => c.method = master::Method::Tree,
        Some("alpha-beta") => c.method = master::Method::AlphaBeta,
        Some(other) => panic!("--method {other}: tree or alpha-beta"),
    }
    if let Some(e) = args.exploration {
        c.exploration = e;
    }
    if let Some(i) = args.inference {
        c.inference = i;
    }
    if let Some(points) = args.equity {
        c.equity = (points > 0.0).then_some(master::Race {
            per_round: points,
            spread: master::RACE.spread,
        });
    }
    if let (Some(spread), Some(race)) = (args.spread, c.equity.as_mut()) {
        race.spread = spread;
    }
    if let Some(w) = args.points_weight {
        c.points = w;
    }
    if let Some(root) = &args.root {
        c.paired = match root.as_str() {
            "paired" => true,
            "ucb" => false,
            other => panic!("--root is paired or ucb, not {other}"),
        };
    }
    if let Some(shed) = &args.shed {
        c.shed = match shed.as_str() {
            "on" => true,
            "off" => false,
            other => panic!("--shed is on or off, not {other}"),
        };
    }
    if args.defend.is_some() || args.block_bonus.is_some() {
        let (weight, block) = match c.playout {
            master::Policy::Defensive { weight, block } => (weight, block),
            master::Policy::Greedy => (0.0, 0.0),
        };
        let weight = args.defend.unwrap_or(weight);
        let block = args.block_bonus.unwrap_or(block);
        c.playout = if weight == 0.0 && block == 0.0 {
            master::Policy::Greedy
        } else {
            master::Policy::Defensive { weight, block }
        };
    }
    c
}

/// One game's result for A (1, 0.5 or 0) and the searching bots' decision times. A
/// results file keeps the result, not the times: times are of one sitting's machine.
#[derive(serde::Serialize, serde::Deserialize)]
struct GameResult {
    score_a: f64,
    /// A's final points minus B's (B's minus A's under penalty scoring: lower is better).
    points_a: f64,
    #[serde(skip)]
    expert_times: Vec<Duration>,
    /// Times of the decisions that had more than one legal move.
    #[serde(skip)]
    expert_choice_times: Vec<Duration>,
    #[serde(skip)]
    master_times: Vec<Duration>,
    #[serde(skip)]
    master_choice_times: Vec<Duration>,
}

/// The preset's rules for this table: penalty with four seats deals six tiles each.
fn table_rules(args: &Args) -> Rules {
    let mut rules = args.preset.rules();
    if let Some(max_pip) = args.max_pip {
        rules.max_pip = max_pip;
        rules.hand_size = default_hand_size(max_pip);
    }
    if args.preset == Preset::Penalty && args.seats == 4 {
        rules.hand_size = 6;
    }
    rules.teams = args.teams;
    rules
}

fn play_game(args: &Args, config: &expert::ExpertConfig, index: usize) -> GameResult {
    let rules = table_rules(args);
    let deal_seed = Seed::from_text(&format!("{}/deal/{}", args.seed, index / 2));
    let mut game =
        Game::new(rules, args.seats, deal_seed, None).expect("valid rules for this table");
    let bot_seed = Seed::from_text(&format!("{}/bots/{index}", args.seed));
    let mut rng = ChaCha8Rng::from_seed(bot_seed.0);
    let a_parity = (index % 2) as u8;
    let level_of = |seat: u8| if seat % 2 == a_parity { args.a } else { args.b };
    let mut result = GameResult {
        score_a: 0.0,
        points_a: 0.0,
        expert_times: Vec::new(),
        expert_choice_times: Vec::new(),
        master_times: Vec::new(),
        master_choice_times: Vec::new(),
    };
    let wall = Wall(Instant::now());
    let thinking = match args.master_ms {
        Some(ms) => Thinking {
            budget: bots::Budget::Time(Duration::from_millis(ms)),
            clock: &wall,
            until: None,
        },
        None => Thinking::work(args.master_work),
    };
    let master_config = master_config(args);
    while let Some(turn) = game.turn() {
        // Seats out of turn first (they may only take points), the seat to move last.
        let (seat, view) = (1..=args.seats)
            .map(|k| (turn + k) % args.seats)
            .map(|s| (s, game.project(Some(s))))
            .find(|(s, v)| *s == turn || !v.legal_moves.is_empty())
            .expect("the seat to move is among them");
        let level = level_of(seat);
        if args.forced_at_once
            && let [only] = view.legal_moves.as_slice()
            && matches!(level, Level::Master | Level::Expert)
        {
            game.play(seat, only.mv).expect("its one legal move");
            continue;
        }
        let started = Instant::now();
        let mv = match level {
            Level::Expert if !view.legal_moves.iter().any(|m| m.mv == Move::Muggins) => {
                Some(expert::choose_with(&view, config, &mut rng))
            }
            Level::Master if !view.legal_moves.iter().any(|m| m.mv == Move::Muggins) => {
                Some(master::search(&view, &master_config, thinking, &mut rng).0)
            }
            _ => bots::choose(level, &view, &mut rng),
        };
        let took = started.elapsed();
        let timed = match level {
            Level::Expert => Some((&mut result.expert_times, &mut result.expert_choice_times)),
            Level::Master => Some((&mut result.master_times, &mut result.master_choice_times)),
            _ => None,
        };
        if let Some((all, choice)) = timed {
            all.push(took);
            if view.legal_moves.len() > 1 {
                choice.push(took);
            }
        }
        let mv = mv.expect("a seat with legal moves moves");
        game.play(seat, mv).expect("bots make legal moves");
    }
    // A side is a seat, or a team of the even or the odd seats: A's when its parity is.
    let points: f64 = game
        .scores()
        .iter()
        .enumerate()
        .map(|(side, &p)| {
            if side % 2 == a_parity as usize {
                f64::from(p)
            } else {
                -f64::from(p)
            }
        })
        .sum();
    result.points_a = if game.rules().scoring == Scoring::Penalty {
        -points
    } else {
        points
    };
    result.score_a = match game.outcome() {
        Some(Outcome::Won { side }) => {
            if side % 2 == a_parity {
                1.0
            } else {
                0.0
            }
        }
        _ => 0.5,
    };
    result
}

/// Opens `path` to append this run's games, creating it with a first line naming the run;
/// the games it already holds (of the first `args.matches`) go into `kept`. Exits if the
/// file names another run.
fn open_results(
    path: &std::path::Path,
    args: &Args,
    kept: &mut [Option<GameResult>],
) -> std::fs::File {
    let identity = args.run_identity();
    match read_results(path) {
        Some(ResultsFile { run, games, whole }) => {
            if run != identity {
                eprintln!(
                    "{} holds another run's games:\n  it: {run}\n  this: {identity}",
                    path.display(),
                );
                std::process::exit(2);
            }
            for (i, result) in games {
                if let Some(slot) = kept.get_mut(i) {
                    *slot = Some(result);
                }
            }
            let mut file = std::fs::OpenOptions::new()
                .append(true)
                .open(path)
                .expect("the results file opens to append");
            // A line cut short by a kill ends here, so the next game starts a line of its own.
            if !whole {
                writeln!(file).expect("the results file takes a line");
            }
            file
        }
        None => {
            let mut file = std::fs::File::create(path).expect("the results file is created");
            writeln!(file, "{}", serde_json::json!({ "run": identity }))
                .expect("the results file takes its first line");
            file
        }
    }
}

/// A results file as read: its run (the first line's `run`), its games, and whether its
/// last line is whole. A line cut short by a kill is left out (its game is played again).
struct ResultsFile {
    run: serde_json::Value,
    games: Vec<(usize, GameResult)>,
    whole: bool,
}

/// The results file at `path`, or `None` when it cannot be read.
fn read_results(path: &std::path::Path) -> Option<ResultsFile> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut lines = text.lines();
    let first: serde_json::Value = lines
        .next()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_default();
    let games = lines
        .filter_map(|line| {
            let game = serde_json::from_str::<serde_json::Value>(line).ok()?;
            let result = serde_json::from_value::<GameResult>(game["result"].clone()).ok()?;
            Some((game["game"].as_u64()? as usize, result))
        })
        .collect();
    Some(ResultsFile {
        run: first["run"].clone(),
        games,
        whole: text.is_empty() || text.ends_with('\n'),
    })
}

/// A deal's figures for A: its share of the deal's games (a drawn game counting half) and
/// its points margin over them.
fn deal_figures<'a>(games: impl IntoIterator<Item = &'a GameResult>) -> (f64, f64) {
    let (mut count, mut score, mut points) = (0.0, 0.0, 0.0);
    for r in games {
        count += 1.0;
        score += r.score_a;
        points += r.points_a;
    }
    (score / count, points)
}

/// This run less `other`'s results file, paired by deal: the mean differences of A's share
/// of a deal's games and of its margin, over the deals complete in both, by
/// [`margin`]. Exits if the other file is not a run of the same deals and players.
fn report_pair(args: &Args, results: &[GameResult], other: &std::path::Path) {
    let Some(ResultsFile { run, games, .. }) = read_results(other) else {
        eprintln!("{}: cannot be read", other.display());
        std::process::exit(2);
    };
    let identity = args.run_identity();
    let same = ["preset", "seats", "teams", "seed", "a", "b", "max_pip"];
    if let Some(field) = same.iter().find(|f| run[**f] != identity[**f]) {
        eprintln!(
            "{} is another table's or seed's run ({field}: {} there, {} here)",
            other.display(),
            run[*field],
            identity[*field]
        );
        std::process::exit(2);
    }
    let mut theirs: Vec<Option<&GameResult>> = vec![None; results.len()];
    for (i, result) in &games {
        if let Some(slot) = theirs.get_mut(*i) {
            *slot = Some(result);
        }
    }
    let (mut wins, mut points, mut mine_share, mut their_share) = (vec![], vec![], 0.0, 0.0);
    for (deal, pair) in results.chunks(2).zip(theirs.chunks(2)) {
        let Some(pair) = pair.iter().copied().collect::<Option<Vec<_>>>() else {
            continue;
        };
        let (mine, their) = (deal_figures(deal), deal_figures(pair));
        mine_share += mine.0;
        their_share += their.0;
        wins.push(mine.0 - their.0);
        points.push(mine.1 - their.1);
    }
    let n = wins.len();
    let (wins, points) = (margin(&wins), margin(&points));
    let (Some(w), Some(p)) = (wins.ci95, points.ci95) else {
        println!(
            "paired with {}: fewer than two deals in both",
            other.display()
        );
        return;
    };
    println!(
        "paired with {} over {n} deals ({:.1}% here, {:.1}% there): wins {:+.1}% ± {:.1}, margin {:+.1} ± {:.1} points a deal",
        other.display(),
        100.0 * mine_share / n as f64,
        100.0 * their_share / n as f64,
        100.0 * wins.per_deal_mean,
        100.0 * (w.1 - w.0) / 2.0,
        points.per_deal_mean,
        (p.1 - p.0) / 2.0
    );
}

/// The 95% Wilson score interval of a proportion.
fn wilson(p: f64, n: f64) -> (f64, f64) {
    let z = 1.959_964f64;
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
    (centre - half, centre + half)
}

fn percentile(sorted: &[Duration], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i].as_secs_f64() * 1000.0
}

fn report_times(level: &str, label: &str, times: &mut [Duration]) {
    times.sort();
    println!(
        "{level} time per move ({label}): p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms over {} moves",
        percentile(times, 0.50),
        percentile(times, 0.99),
        times.last().map_or(0.0, |d| d.as_secs_f64() * 1000.0),
        times.len()
    );
}

fn main() {
    let args = Args::parse();
    assert!((2..=4).contains(&args.seats), "2 to 4 seats");
    if let Err(e) = table_rules(&args).validate(args.seats) {
        eprintln!("{}: {}", e.field, e.message);
        std::process::exit(2);
    }
    let mut config = expert::ExpertConfig::default();
    if let Some(r) = args.rollouts {
        config.rollouts = r;
    }
    if let Some(b) = args.match_bonus {
        config.match_bonus = b;
    }
    let mut kept: Vec<Option<GameResult>> = (0..args.matches).map(|_| None).collect();
    let file = args
        .results
        .as_ref()
        .map(|path| open_results(path, &args, &mut kept));
    let todo: Vec<usize> = (0..args.matches).filter(|&i| kept[i].is_none()).collect();
    if kept.iter().any(Option::is_some) {
        eprintln!(
            "{} of {} games are in the results file; playing the other {}",
            args.matches - todo.len(),
            args.matches,
            todo.len()
        );
    }
    let next = AtomicUsize::new(0);
    let results = Mutex::new(kept);
    let file = Mutex::new(file);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..args.threads.max(1) {
            scope.spawn(|| {
                while let Some(&i) = todo.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let r = play_game(&args, &config, i);
                    let mut all = results.lock().unwrap();
                    if let Some(file) = file.lock().unwrap().as_mut() {
                        let line = serde_json::json!({"game": i, "result": &r});
                        writeln!(file, "{line}")
                            .and_then(|()| file.flush())
                            .expect("the results file takes the game");
                    }
                    all[i] = Some(r);
                    let done = all.iter().filter(|r| r.is_some()).count();
                    if done % 100 == 0 {
                        eprintln!(
                            "{done}/{} games, {:.0} s",
                            args.matches,
                            started.elapsed().as_secs_f64()
                        );
                    }
                }
            });
        }
    });
    let results: Vec<GameResult> = results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    let n = results.len() as f64;
    let score: f64 = results.iter().map(|r| r.score_a).sum();
    let gather = |f: fn(&GameResult) -> &Vec<Duration>| -> Vec<Duration> {
        results.iter().flat_map(|r| f(r).iter().copied()).collect()
    };
    let mut times = gather(|r| &r.expert_times);
    let mut choice = gather(|r| &r.expert_choice_times);
    let mut master_times = gather(|r| &r.master_times);
    let mut master_choice = gather(|r| &r.master_choice_times);
    println!(
        "preset {}, double-{}, {} seats{}, seed {:?}, {} games ({} played now in {:.1} s, {} threads){}{}",
        args.preset.name(),
        table_rules(&args).max_pip,
        args.seats,
        if args.teams { " in teams" } else { "" },
        args.seed,
        results.len(),
        todo.len(),
        started.elapsed().as_secs_f64(),
        args.threads.max(1),
        if args.a == Level::Expert || args.b == Level::Expert {
            format!(
                ", expert rollouts {}, match bonus {}",
                config.rollouts, config.match_bonus
            )
        } else {
            String::new()
        },
        if args.a == Level::Master || args.b == Level::Master {
            let c = master_config(&args);
            format!(
                ", master {}, {:?}{}, exploration {}, playout {:?}, inference {}{}, equity {:?}, points {}, depth {}, beam {}, endgame {}",
                match args.master_ms {
                    Some(ms) => format!("{ms} ms by the clock"),
                    None => format!("work {}", args.master_work),
                },
                c.method,
                if c.paired {
                    " (paired at the root)"
                } else {
                    ""
                },
                c.exploration,
                c.playout,
                c.inference,
                if c.shed { " (by the pips shed)" } else { "" },
                c.equity,
                c.points,
                c.depth,
                c.beam,
                c.endgame
            )
        } else {
            String::new()
        }
    );
    if !times.is_empty() {
        report_times("expert", "every decision", &mut times);
        report_times(
            "expert",
            "decisions with more than one legal move",
            &mut choice,
        );
    }
    if !master_times.is_empty() {
        report_times("master", "every decision", &mut master_times);
        report_times(
            "master",
            "decisions with more than one legal move",
            &mut master_choice,
        );
    }
    // Deals: games 2k and 2k + 1 (an odd last game is a deal of its own). A deal's games
    // are not independent (the same hands, the seats swapped): the deals are the samples,
    // of the margin and of the win rate alike.
    let deals: Vec<(f64, f64)> = results.chunks(2).map(deal_figures).collect();
    let margins: Vec<f64> = deals.iter().map(|d| d.1).collect();
    let m = margin(&margins);
    if let Some((lo, hi)) = m.ci95 {
        let spread = (hi - lo) / 2.0 / t_975(m.deals_done - 1) * (m.deals_done as f64).sqrt();
        let needed = if m.per_deal_mean == 0.0 {
            "never".to_owned()
        } else {
            format!(
                "{:.0}",
                (1.959_964 * spread / m.per_deal_mean).powi(2).ceil()
            )
        };
        println!(
            "duplicate margin for {}: {:+.1} points a deal [{:+.1}, {:+.1}] over {} deals (sd {:.1}); about {needed} deals separate them at 95%",
            args.a.as_str(),
            m.per_deal_mean,
            lo,
            hi,
            m.deals_done,
            spread
        );
    }
    let p = if n > 0.0 { score / n } else { 0.0 };
    let (wilson_lo, wilson_hi) = wilson(p, n.max(1.0));
    // A's share of each deal's games, by Student's t.
    let shares: Vec<f64> = deals.iter().map(|d| d.0).collect();
    let (lo, hi) = match margin(&shares).ci95 {
        Some((lo, hi)) => (p - (hi - lo) / 2.0, p + (hi - lo) / 2.0),
        None => (wilson_lo, wilson_hi),
    };
    println!(
        "{} vs {}: {:.1}% [{:.1}, {:.1}] over {} matches ({} deals; as independent games, Wilson [{:.1}, {:.1}])",
        args.a.as_str(),
        args.b.as_str(),
        p * 100.0,
        lo * 100.0,
        hi * 100.0,
        results.len(),
        shares.len(),
        wilson_lo * 100.0,
        wilson_hi * 100.0
    );
    if let Some(other) = &args.pair_with {
        report_pair(&args, &results, other);
    }
}
