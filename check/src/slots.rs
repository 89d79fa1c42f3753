//! A map by MPI request handle for the message path: each request the
//! checker keeps something under goes in and out once per message, so a
//! hash map's probing and tombstones cost a fair part of the checker's
//! work per message (about a fifth with the point-to-point checks off).
//! Most keys take a slot of a direct-mapped table instead (a multiply, a
//! compare, a store); a key whose slot another key holds goes to a hash
//! map beside it. MPICH's handles are consecutive integers and Open MPI's
//! are addresses from a free list, both spread evenly by the multiply.

use rustc_hash::FxHashMap;

/// log2 of the slots: 1024 live requests before keys share slots often.
const BITS: u32 = 10;

pub struct Slots<V> {
    slots: Vec<Option<(u64, V)>>,
    spill: FxHashMap<u64, V>,
    len: usize,
}

impl<V> Default for Slots<V> {
    fn default() -> Self {
        Slots {
            slots: Vec::new(),
            spill: FxHashMap::default(),
            len: 0,
        }
    }
}

/// Fibonacci hashing: the top bits of the key times 2^64 / phi.
#[inline]
fn index(key: u64) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - BITS)) as usize
}

impl<V> Slots<V> {
    /// Keeps `value` under `key` (replacing what was there).
    #[inline]
    pub fn insert(&mut self, key: u64, value: V) {
        if self.slots.is_empty() {
            self.slots.resize_with(1 << BITS, || None);
        }
        let slot = &mut self.slots[index(key)];
        match slot {
            Some((k, v)) if *k == key => *v = value,
            Some(_) => {
                if self.spill.insert(key, value).is_none() {
                    self.len += 1;
                }
            }
            None => match self.spill.get_mut(&key) {
                // (Put there while the slot was taken.)
                Some(v) => *v = value,
                None => {
                    *slot = Some((key, value));
                    self.len += 1;
                }
            },
        }
    }

    /// Takes what is kept under `key`.
    #[inline]
    pub fn remove(&mut self, key: u64) -> Option<V> {
        let slot = self.slots.get_mut(index(key))?;
        let out = match slot {
            Some((k, _)) if *k == key => slot.take().map(|(_, v)| v),
            _ if self.spill.is_empty() => None,
            _ => self.spill.remove(&key),
        };
        if out.is_some() {
            self.len -= 1;
        }
        out
    }

    pub fn get(&self, key: u64) -> Option<&V> {
        match self.slots.get(index(key))? {
            Some((k, v)) if *k == key => Some(v),
            _ => self.spill.get(&key),
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every value, in no order.
    pub fn into_values(self) -> impl Iterator<Item = V> {
        let slotted = self.slots.into_iter().flatten().map(|(_, v)| v);
        slotted.chain(self.spill.into_values())
    }

    /// Every key and value, in no order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &V)> {
        let slotted = self.slots.iter().flatten().map(|(k, v)| (*k, v));
        slotted.chain(self.spill.iter().map(|(k, v)| (*k, v)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// `n` keys that share one slot.
    fn clashing(n: usize) -> Vec<u64> {
        let first = index(1);
        (1..).filter(|&k| index(k) == first).take(n).collect()
    }

    /// Against a HashMap, on keys that share slots and keys that do not.
    #[test]
    fn behaves_as_a_map() {
        let clash = clashing(8);
        let mut s = Slots::default();
        let mut m = HashMap::new();
        let mut x = 7u64;
        for step in 0..20_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let key = match x % 3 {
                0 => (x >> 40) % 64, // dense, like MPICH's
                1 => clash[((x >> 40) % 8) as usize],
                _ => 0x7f00_0000_0000 + (x >> 50) * 0x140, // addresses
            };
            if x % 5 < 3 {
                s.insert(key, step);
                m.insert(key, step);
            } else {
                assert_eq!(s.remove(key), m.remove(&key));
            }
            assert_eq!(s.get(key), m.get(&key));
            assert_eq!(s.len(), m.len());
        }
        let mut all: Vec<_> = s.iter().map(|(k, v)| (k, *v)).collect();
        let mut want: Vec<_> = m.iter().map(|(k, v)| (*k, *v)).collect();
        all.sort_unstable();
        want.sort_unstable();
        assert_eq!(all, want);
    }

    #[test]
    fn a_key_put_aside_is_found_after_its_slot_frees() {
        let (a, b) = (clashing(2)[0], clashing(2)[1]);
        let mut s = Slots::default();
        s.insert(a, 1);
        s.insert(b, 2); // aside: a holds the slot
        assert_eq!(s.remove(a), Some(1));
        s.insert(b, 3); // replaces the one aside, not a second copy
        assert_eq!(s.len(), 1);
        assert_eq!(s.remove(b), Some(3));
        assert!(s.is_empty());
        assert_eq!(s.remove(b), None);
    }
}
