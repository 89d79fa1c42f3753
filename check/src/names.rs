//! The communicators the checker knows: their names for reports and
//! answers, and the list of those a hang report looks at for "pending
//! on …" (pure: handle bits only).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, OnceLock};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The names of the communicators the checker knows, for reports and
/// answers.
fn names() -> &'static Mutex<HashMap<u64, String>> {
    static N: OnceLock<Mutex<HashMap<u64, String>>> = OnceLock::new();
    N.get_or_init(Default::default)
}

pub fn set_name(comm: u64, name: String) {
    lock(names()).insert(comm, name);
}

pub fn name_of(comm: u64, size: usize) -> String {
    name(comm).unwrap_or_else(|| format!("an unnamed communicator of {size} ranks"))
}

/// The name of a communicator the checker knows (not freed).
pub fn name(comm: u64) -> Option<String> {
    lock(names()).get(&comm).cloned()
}

fn comms() -> &'static Mutex<Vec<u64>> {
    static C: OnceLock<Mutex<Vec<u64>>> = OnceLock::new();
    C.get_or_init(Default::default)
}

/// A user communicator the checker saw made (or MPI_COMM_WORLD).
pub fn remember(comm: u64) {
    let mut c = lock(comms());
    if !c.contains(&comm) {
        c.push(comm);
    }
}

/// A communicator's checker state was freed (with the communicator).
pub fn forget(comm: u64) {
    lock(comms()).retain(|&c| c != comm);
    lock(names()).remove(&comm);
}

/// The communicators remembered.
pub fn known() -> Vec<u64> {
    lock(comms()).clone()
}
