//! The wire formats, with no MPI: the portable codes, the tree a stream
//! describes, the external (XDR) and internal (native) node grammars, the
//! compressed wrapper, and the output sink they are written to.
//! `spec/` describes these bytes; this module is their one implementation.

pub mod codes;
pub mod compressed;
pub mod external;
pub mod internal;
pub mod layout;
pub mod reader;
pub mod sink;
pub mod tree;
pub mod writer;
