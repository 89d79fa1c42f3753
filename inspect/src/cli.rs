//! The command line: subcommands and their options (clap's derive API).

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Inspect archived MPI datatypes: the streams MPIX_Type_marshal writes.
///
/// Reads external and compressed streams from any build, and internal
/// streams written by this very build, from a file or from standard input
/// (FILE "-"). The representation is recognised by the stream's magic
/// word. MPI is initialised as a singleton: no mpiexec is needed.
#[derive(Debug, Parser)]
#[command(name = "mpix-marshal", version, about, long_about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the constructor tree with every argument, name and attribute,
    /// and per level the size, bounds, element count and signature hash.
    Dump(DumpArgs),
    /// Compare two archived types at one of five levels, explaining the
    /// first difference. Exit status: 0 equal, 1 different, 2 error.
    Diff(DiffArgs),
    /// Validate a stream: its checksum (external and compressed streams of
    /// the current versions carry a CRC-32C of all their bytes), its syntax
    /// (every format rule, the header's signature hash against the type),
    /// and that this MPI rebuilds it. Exit status: 0 valid, 1 invalid (the
    /// message gives the byte offset and the item), 2 error (unreadable
    /// file).
    Check(CheckArgs),
    /// Rewrite a stream in another representation (the tree is unchanged).
    Convert(ConvertArgs),
    /// Print the signature hash of the archived type, in one or every family.
    Hash(HashArgs),
    /// Draw the typemap as an SVG picture: a ruler from lb to ub, each basic
    /// element a box coloured by its type, repetitions drawn compactly.
    Draw(DrawArgs),
}

/// One input stream.
#[derive(Debug, Args)]
pub struct Input {
    /// The stream file ("-" for standard input).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

/// How to read an input stream.
#[derive(Debug, Args)]
pub struct Reading {
    /// The representation, when the magic word should not decide.
    #[arg(long, value_enum, value_name = "REP")]
    pub from: Option<Rep>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Rep {
    External,
    Internal,
    Compressed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutRep {
    External,
    Compressed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareLevel {
    Signature,
    Typemap,
    Constructor,
    Names,
    Attributes,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    Gropp,
    XorBs1,
    MmmBs1,
    Gfd8,
    Gfd16,
    Crc32,
    Default64,
    /// Every family, one per line.
    All,
}

#[derive(Debug, Args)]
pub struct DumpArgs {
    #[command(flatten)]
    pub input: Input,
    #[command(flatten)]
    pub reading: Reading,
    /// Print JSON (one object) for tools instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The first stream file ("-" for standard input).
    #[arg(value_name = "A")]
    pub a: PathBuf,
    /// The second stream file.
    #[arg(value_name = "B")]
    pub b: PathBuf,
    /// Compare up to this level (each level includes the weaker ones).
    #[arg(long, value_enum, default_value = "attributes")]
    pub level: CompareLevel,
    /// Print nothing; only the exit status tells.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub input: Input,
    #[command(flatten)]
    pub reading: Reading,
    /// Only read the stream; do not rebuild the type with the local MPI.
    #[arg(long)]
    pub no_rebuild: bool,
    /// Also refuse (exit status 1) a stream that carries no checksum: an
    /// external stream of version 4, a compressed one of version 3, any
    /// internal stream.
    #[arg(long)]
    pub strict: bool,
}

#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// The representation to write.
    #[arg(long, value_enum)]
    pub to: OutRep,
    #[command(flatten)]
    pub reading: Reading,
    /// The stream to read ("-" for standard input).
    #[arg(value_name = "IN")]
    pub input: PathBuf,
    /// Where to write ("-" for standard output).
    #[arg(value_name = "OUT")]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct HashArgs {
    #[command(flatten)]
    pub input: Input,
    #[command(flatten)]
    pub reading: Reading,
    /// The hash family (spec/signature.md); "all" prints every one.
    #[arg(long, value_enum, default_value = "default64")]
    pub kind: Kind,
}

#[derive(Debug, Args)]
pub struct DrawArgs {
    /// The stream file(s): several are drawn one above the other on one
    /// byte scale, to compare them.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub reading: Reading,
    /// The SVG file to write ("-" for standard output).
    #[arg(short, long, value_name = "SVG")]
    pub output: PathBuf,
    /// Width of the ruler in pixels.
    #[arg(long, default_value_t = 960, value_parser = clap::value_parser!(u32).range(200..=20000))]
    pub width: u32,
}
