//! Seeds and deals.
//!
//! Every game carries a 32-byte seed (from the OS when the creator gave none), and every
//! round draws its randomness — lots, shuffle, start tile, a random leader — from its own
//! ChaCha8 stream `(seed, round number)`. So the same rules and seed give the same deals in
//! every round whatever was played before, and the engine never touches a global RNG.

use std::fmt;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::rules::{Opening, Rules, RulesError};
use super::tile::{Tile, TileSet, set_size};

/// The seed of a game's deals.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Seed(pub [u8; 32]);

impl Seed {
    /// A seed from any text (its SHA-256), for tournaments and tests.
    pub fn from_text(text: &str) -> Seed {
        Seed(Sha256::digest(text.as_bytes()).into())
    }

    pub fn to_hex(self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// A seed as a game's creator gives it: `hex:` and 64 hex digits are the 32 bytes
    /// themselves (an export's seed, given back), any other text is hashed
    /// ([`Seed::from_text`]). Text that starts `hex:` but is not 32 bytes is refused, so no
    /// text is taken one way where its creator meant the other.
    pub fn given(text: &str) -> Result<Seed, String> {
        let Some(hex) = text.strip_prefix(Seed::HEX_PREFIX) else {
            return Ok(Seed::from_text(text));
        };
        let mut bytes = [0u8; 32];
        let digits = hex.as_bytes();
        if digits.len() != 64 || !digits.iter().all(u8::is_ascii_hexdigit) {
            return Err(format!(
                "\"{}\" and 64 hex digits (32 bytes, as an export gives the seed) are the seed itself; got {} characters after it",
                Seed::HEX_PREFIX,
                hex.chars().count()
            ));
        }
        for (byte, pair) in bytes.iter_mut().zip(digits.chunks(2)) {
            let pair = std::str::from_utf8(pair).expect("ASCII hex digits");
            *byte = u8::from_str_radix(pair, 16).expect("two hex digits");
        }
        Ok(Seed(bytes))
    }

    /// Marks a seed given as its bytes in hex.
    pub const HEX_PREFIX: &'static str = "hex:";
}

impl fmt::Debug for Seed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Seed({})", self.to_hex())
    }
}

/// The RNG of one round.
pub(crate) fn round_rng(seed: &Seed, round: u16) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::from_seed(seed.0);
    rng.set_stream(round as u64);
    rng
}

/// One round's deal: a hand per seat and the boneyard, listed top first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deal {
    pub hands: Vec<Vec<Tile>>,
    pub boneyard: Vec<Tile>,
}

impl Deal {
    /// A shuffled deal (the engine deals through [`shuffle_into`] into a reused buffer).
    #[cfg(test)]
    pub(crate) fn shuffled(rules: &Rules, seats: u8, rng: &mut ChaCha8Rng) -> Deal {
        let mut stock = Vec::new();
        shuffle_into(rules, rng, &mut stock);
        Deal::from_stock(rules, seats, &stock)
    }

    /// Splits a stock in deal order: the hands one after the other, then the boneyard,
    /// top first.
    pub(crate) fn from_stock(rules: &Rules, seats: u8, stock: &[Tile]) -> Deal {
        let n = rules.hand_size as usize;
        let hands = (0..seats as usize)
            .map(|s| stock[s * n..(s + 1) * n].to_vec())
            .collect();
        Deal {
            hands,
            boneyard: stock[seats as usize * n..].to_vec(),
        }
    }

    /// Refuses a deal that is not a permutation of the set dealt as the rules say.
    pub fn validate(&self, rules: &Rules, seats: u8) -> Result<(), RulesError> {
        let refuse = |message: String| {
            Err(RulesError {
                field: "deal",
                message,
            })
        };
        if self.hands.len() != seats as usize {
            return refuse(format!("{} hands for {seats} seats", self.hands.len()));
        }
        let mut seen = TileSet::EMPTY;
        let all = TileSet::full(rules.max_pip);
        for (seat, hand) in self.hands.iter().enumerate() {
            if hand.len() != rules.hand_size as usize {
                return refuse(format!(
                    "seat {seat} holds {} tiles, the rules deal {}",
                    hand.len(),
                    rules.hand_size
                ));
            }
        }
        for &t in self.hands.iter().flatten().chain(&self.boneyard) {
            if !all.contains(t) {
                return refuse(format!("{t} is not in the double-{} set", rules.max_pip));
            }
            if seen.contains(t) {
                return refuse(format!("{t} appears twice"));
            }
            seen.insert(t);
        }
        if seen.len() != set_size(rules.max_pip) {
            let missing: Vec<String> = all.without(seen).iter().map(|t| t.to_string()).collect();
            return refuse(format!(
                "the deal must use every tile of the set; missing {}",
                missing.join(", ")
            ));
        }
        if rules.opening == Opening::StartTile && self.boneyard.iter().all(|t| t.is_double()) {
            return refuse("the boneyard holds no non-double to turn up as the start tile".into());
        }
        Ok(())
    }
}

/// Fills `stock` with the whole set, shuffled: the deal order of [`Deal::from_stock`].
pub(crate) fn shuffle_into(rules: &Rules, rng: &mut ChaCha8Rng, stock: &mut Vec<Tile>) {
    stock.clear();
    stock.extend(Tile::all(rules.max_pip));
    stock.shuffle(rng);
}

/// Draw lots: each seat draws from the shuffled stock, the heaviest tile leads. Tiles are
/// totally ordered for "heaviest" (docs/rules.md), so the redraw on a tie never happens.
pub(crate) fn draw_lots(rules: &Rules, seats: u8, rng: &mut ChaCha8Rng) -> u8 {
    let mut stock: Vec<Tile> = Tile::all(rules.max_pip).collect();
    stock.shuffle(rng);
    (0..seats)
        .max_by_key(|&s| stock[s as usize].heaviness())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Preset;

    #[test]
    fn the_same_seed_and_round_deal_the_same_tiles() {
        let rules = Preset::Draw.rules();
        let seed = Seed::from_text("tournament 7");
        let a = Deal::shuffled(&rules, 3, &mut round_rng(&seed, 2));
        let b = Deal::shuffled(&rules, 3, &mut round_rng(&seed, 2));
        let c = Deal::shuffled(&rules, 3, &mut round_rng(&seed, 3));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.validate(&rules, 3), Ok(()));
    }

    #[test]
    fn a_seed_given_as_hex_is_its_bytes_and_any_other_text_is_hashed() {
        let seed = Seed::from_text("tournament 7");
        assert_eq!(Seed::given(&format!("hex:{}", seed.to_hex())), Ok(seed));
        assert_eq!(
            Seed::given(&format!("hex:{}", seed.to_hex().to_uppercase())),
            Ok(seed)
        );
        assert_eq!(Seed::given("tournament 7"), Ok(seed));
        // The export's hex without the prefix is text like any other.
        assert_eq!(
            Seed::given(&seed.to_hex()),
            Ok(Seed::from_text(&seed.to_hex()))
        );
        for bad in [
            "hex:",
            "hex:00",
            &format!("hex:{}0", seed.to_hex()),
            &format!("hex:{}", "g".repeat(64)),
        ] {
            assert!(Seed::given(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn deals_that_are_not_a_permutation_of_the_set_are_refused() {
        let rules = Preset::Classic.rules();
        let mut deal = Deal::shuffled(&rules, 2, &mut round_rng(&Seed::from_text("x"), 1));
        deal.boneyard.pop();
        assert!(
            deal.validate(&rules, 2)
                .unwrap_err()
                .message
                .contains("missing")
        );
        let mut deal = Deal::shuffled(&rules, 2, &mut round_rng(&Seed::from_text("x"), 1));
        deal.boneyard[0] = deal.hands[0][0];
        assert!(
            deal.validate(&rules, 2)
                .unwrap_err()
                .message
                .contains("twice")
        );
    }
}
