//! Information-set Monte Carlo tree search (single observer): the master's search before
//! the exact endgame.
//!
//! One tree over what the searching seat knows. Each iteration samples a world consistent
//! with the projection, walks down the tree choosing at each node among the moves legal in
//! that world (by UCB on the mover's own statistics, counted over the iterations in which
//! the move was available), adds one node, and plays the world to the end of the round
//! with the configured playout policy ([`Config::playout`]). Every node keeps the outcome for the seat that made its move,
//! so each seat picks its own best in turn, without seeing the others' hands: what a
//! determinised alpha-beta search cannot do (there every opponent sees every hand of its
//! world). The root move chosen most often is played.

use super::config::Config;
use super::playout::{Room, leaf_value, ranked_moves, to_round_end};
use super::think::Meter;
use domino_engine::{Game, Move};

/// Outcomes are divided by this before they reach UCB: about a round's typical swing.
const SCALE: f64 = 50.0;

struct Node {
    /// The move into this node, and the seat that made it.
    mv: Move,
    who: u8,
    visits: u32,
    /// Iterations in which this node's move was legal when its parent was reached.
    avail: u32,
    /// Sum of the outcomes, for `who`, over the visits (in units of [`SCALE`]).
    total: f64,
    children: Vec<u32>,
}

/// The search's state for one decision.
pub(super) struct Tree<'a> {
    nodes: Vec<Node>,
    seat: u8,
    before: &'a [i32],
    start: u16,
    config: &'a Config,
    room: Room,
    moves: Vec<Move>,
    path: Vec<u32>,
}

impl<'a> Tree<'a> {
    pub(super) fn new(seat: u8, before: &'a [i32], start: u16, config: &'a Config) -> Self {
        let root = Node {
            mv: Move::Pass,
            who: seat,
            visits: 0,
            avail: 0,
            total: 0.0,
            children: Vec::new(),
        };
        Tree {
            nodes: vec![root],
            seat,
            before,
            start,
            config,
            room: Room::default(),
            moves: Vec::new(),
            path: Vec::new(),
        }
    }

    /// One iteration in `world` (played on, then dropped), the root's moves being
    /// `candidates` (the seat's own, legal in every world), through candidate `root` if
    /// given. Counts its moves on `meter`.
    pub(super) fn iterate(
        &mut self,
        world: Game,
        candidates: &[Move],
        root: Option<usize>,
        meter: &mut Meter<'_>,
    ) {
        let mut g = world;
        let mut node = 0u32;
        self.path.clear();
        loop {
            if g.rounds_done() != self.start || g.turn().is_none() {
                break;
            }
            let who = if node == 0 {
                self.moves.clear();
                match root {
                    Some(c) => self.moves.push(candidates[c]),
                    None => self.moves.extend_from_slice(candidates),
                }
                self.seat
            } else {
                ranked_moves(&g, &mut self.room, &mut self.moves)
            };
            // Every legal move's child is available this iteration; the first without a
            // child (best by the greedy order) is added, else UCB picks among them.
            let mut untried = None;
            let mut best: Option<(u32, f64)> = None;
            let parent = node as usize;
            for &mv in &self.moves {
                let child = self.nodes[parent].children.iter().copied().find(|&c| {
                    self.nodes[c as usize].mv == mv && self.nodes[c as usize].who == who
                });
                match child {
                    None => {
                        if untried.is_none() {
                            untried = Some(mv);
                        }
                    }
                    Some(c) => {
                        let n = &mut self.nodes[c as usize];
                        n.avail += 1;
                        let mean = n.total / f64::from(n.visits.max(1));
                        let ucb = mean
                            + self.config.exploration
                                * (f64::from(n.avail).ln() / f64::from(n.visits.max(1))).sqrt();
                        if best.is_none_or(|(_, b)| ucb > b) {
                            best = Some((c, ucb));
                        }
                    }
                }
            }
            let (next, expanded) = match untried {
                Some(mv) => {
                    let id = self.nodes.len() as u32;
                    self.nodes.push(Node {
                        mv,
                        who,
                        visits: 0,
                        avail: 1,
                        total: 0.0,
                        children: Vec::new(),
                    });
                    self.nodes[parent].children.push(id);
                    (id, true)
                }
                None => (best.expect("a seat in turn has a move").0, false),
            };
            self.room.events.clear();
            g.play_legal(who, self.nodes[next as usize].mv, &mut self.room.events);
            meter.count(1);
            self.path.push(next);
            node = next;
            if expanded {
                break;
            }
        }
        let played = to_round_end(&mut g, self.config.playout, &mut self.room);
        meter.count(u64::from(played));
        let mut values: [Option<f64>; 4] = [None; 4];
        for &id in &self.path {
            let n = &mut self.nodes[id as usize];
            let v = *values[n.who as usize].get_or_insert_with(|| {
                let c = self.config;
                leaf_value(&g, self.before, n.who, c.match_bonus, c.equity, c.points) / SCALE
            });
            n.visits += 1;
            n.total += v;
        }
    }

    /// The root move visited most (the earlier candidate on a tie), if any was; under
    /// [`Config::paired`] the one of the best mean.
    pub(super) fn best(&self) -> Option<Move> {
        let mut best: Option<&Node> = None;
        let mean = |n: &Node| n.total / f64::from(n.visits.max(1));
        for &c in &self.nodes[0].children {
            let n = &self.nodes[c as usize];
            let better = match best {
                None => true,
                Some(b) if self.config.paired => n.visits > 0 && mean(n) > mean(b),
                Some(b) => n.visits > b.visits,
            };
            if better {
                best = Some(n);
            }
        }
        best.filter(|n| n.visits > 0).map(|n| n.mv)
    }

    /// The root's child for `mv`, if it was tried.
    #[cfg(test)]
    fn root_child(&self, mv: Move) -> Option<&Node> {
        self.nodes[0]
            .children
            .iter()
            .map(|&c| &self.nodes[c as usize])
            .find(|n| n.mv == mv)
    }

    /// Root visits per candidate, in `candidates`' order.
    #[cfg(test)]
    pub(super) fn root_visits(&self, candidates: &[Move]) -> Vec<u32> {
        candidates
            .iter()
            .map(|&mv| self.root_child(mv).map_or(0, |n| n.visits))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::Thinking;
    use crate::expert::candidates;
    use crate::sampling::sample_hidden;
    use domino_engine::rules::Opening;
    use domino_engine::{Preset, Rules, Seed};

    #[test]
    fn every_candidate_is_tried_and_the_root_visits_add_up_to_the_worlds() {
        for preset in [Preset::AllFives, Preset::Block, Preset::Muggins] {
            let rules = Rules {
                opening: Opening::SeatZero,
                ..preset.rules()
            };
            let game = Game::new(rules, 2, Seed::from_text("tree"), None).unwrap();
            let view = game.project(Some(0));
            let moves = candidates(&view);
            assert!(moves.len() > 1);
            let config = Config::default();
            let mut tree = Tree::new(0, &view.scores, view.rounds_done, &config);
            let mut meter = Meter::new(Thinking::work(u64::MAX), None, u64::MAX);
            let mut rng = ChaCha8Rng::seed_from_u64(5);
            let worlds = 300;
            for _ in 0..worlds {
                let (hands, boneyard) = sample_hidden(&view, 0, &mut rng);
                let world = Game::determinise(&view, hands, boneyard).unwrap();
                tree.iterate(world, &moves, None, &mut meter);
            }
            let visits = tree.root_visits(&moves);
            assert!(visits.iter().all(|&v| v > 0), "{preset:?}: {visits:?}");
            assert_eq!(visits.iter().sum::<u32>(), worlds, "{preset:?}");
            let best = tree.best().unwrap();
            let most = visits.iter().max().unwrap();
            assert_eq!(
                visits[moves.iter().position(|&m| m == best).unwrap()],
                *most
            );
        }
    }

    #[test]
    fn a_paired_root_tries_every_candidate_in_every_world_and_plays_the_best_mean() {
        let rules = Rules {
            opening: Opening::SeatZero,
            ..Preset::AllFives.rules()
        };
        let game = Game::new(rules, 2, Seed::from_text("tree"), None).unwrap();
        let view = game.project(Some(0));
        let moves = candidates(&view);
        assert!(moves.len() > 1);
        let config = Config {
            paired: true,
            ..Config::for_table(&view.rules, view.seats)
        };
        let mut tree = Tree::new(0, &view.scores, view.rounds_done, &config);
        let mut meter = Meter::new(Thinking::work(u64::MAX), None, u64::MAX);
        let mut rng = ChaCha8Rng::seed_from_u64(6);
        let worlds = 200;
        for _ in 0..worlds {
            let (hands, boneyard) = sample_hidden(&view, 0, &mut rng);
            let world = Game::determinise(&view, hands, boneyard).unwrap();
            for c in 0..moves.len() {
                tree.iterate(world.clone(), &moves, Some(c), &mut meter);
            }
        }
        assert_eq!(tree.root_visits(&moves), vec![worlds; moves.len()]);
        let mean = |mv: Move| {
            let n = tree.root_child(mv).unwrap();
            n.total / f64::from(n.visits)
        };
        let best = tree.best().unwrap();
        assert!(moves.iter().all(|&mv| mean(mv) <= mean(best)));
    }
}
