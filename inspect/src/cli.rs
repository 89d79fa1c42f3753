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
    /// Validate a stream. Exit status: 0 valid, 1 invalid (the message
    /// gives the byte offset and the item), 2 error (unreadable file).
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
    /// Print JSON (one object; with --data, an array of elements) for tools
    /// instead of text.
    #[arg(long)]
    pub json: bool,
    /// Print the values of this data file, read through the archived type
    /// element by element: copies of the type one extent apart from
    /// --offset, as an MPI-IO file view with the type as filetype places
    /// them. Each line: the element's path in the tree, its type, its value.
    #[arg(long, value_name = "DATA")]
    pub data: Option<PathBuf>,
    /// With --data: the byte of the data file where copy 0 starts.
    #[arg(long, value_name = "BYTES", default_value_t = 0, requires = "data")]
    pub offset: u64,
    /// With --data: print at most N elements.
    #[arg(long, value_name = "N", requires = "data")]
    pub count: Option<u64>,
    /// With --data: the data representation of the file (MPI-IO's datarep):
    /// this machine's own, or external32 (big-endian, the MPI standard's sizes).
    #[arg(long, value_enum, default_value = "native", requires = "data")]
    pub datarep: DatarepArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DatarepArg {
    Native,
    External32,
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
    /// Draw only bytes LO to HI (HI excluded), e.g. "0:4096": the ruler
    /// spans them, elements and repetitions outside are left out.
    #[arg(long, value_name = "LO:HI", value_parser = parse_range, conflicts_with = "period")]
    pub range: Option<(i64, i64)>,
    /// Draw one period of the outermost repeated level (one copy of a
    /// vector of 10^6 copies, one row of a block-cyclic darray), with the
    /// level's name and repeat count in the subtitle.
    #[arg(long)]
    pub period: bool,
}

/// "LO:HI" with LO < HI, both byte displacements.
fn parse_range(s: &str) -> Result<(i64, i64), String> {
    let (lo, hi) = s
        .split_once(':')
        .ok_or_else(|| format!("{s:?} is not LO:HI"))?;
    let num = |v: &str| {
        v.trim()
            .parse::<i64>()
            .map_err(|e| format!("{v:?} in {s:?}: {e}"))
    };
    let (lo, hi) = (num(lo)?, num(hi)?);
    if lo >= hi {
        return Err(format!("the range {s:?} is empty: LO must be less than HI"));
    }
    Ok((lo, hi))
}
