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
#[command(after_long_help = examples_help("mpix-marshal"))]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the constructor tree with every argument, name and attribute,
    /// and per level the size, bounds, element count and signature hash.
    #[command(after_long_help = examples_help("dump"))]
    Dump(DumpArgs),
    /// Compare two archived types at one of five levels, explaining the
    /// first difference. Exit status: 0 equal, 1 different, 2 error.
    #[command(after_long_help = examples_help("diff"))]
    Diff(DiffArgs),
    /// Validate a stream: its checksum (external and compressed streams of
    /// the current versions carry a CRC-32C of all their bytes), its syntax
    /// (every format rule, the header's signature hash against the type),
    /// and that this MPI rebuilds it. Exit status: 0 valid, 1 invalid (the
    /// message gives the byte offset and the item), 2 error (unreadable
    /// file).
    #[command(after_long_help = examples_help("check"))]
    Check(CheckArgs),
    /// Rewrite a stream in another representation (the tree is unchanged).
    #[command(after_long_help = examples_help("convert"))]
    Convert(ConvertArgs),
    /// Print the signature hash of the archived type, in one or every family.
    #[command(after_long_help = examples_help("hash"))]
    Hash(HashArgs),
    /// Draw the typemap as an SVG picture: a ruler from lb to ub, each basic
    /// element a box coloured by its type, repetitions drawn compactly.
    #[command(after_long_help = examples_help("draw"))]
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

/// One example of a command line: the line and what it does.
#[derive(Debug, Clone, Copy)]
pub struct Example {
    pub line: &'static str,
    pub does: &'static str,
}

/// The examples of each (sub)command, by name ("mpix-marshal" for the
/// command itself): the one source of `--help`'s and the man pages'.
pub const EXAMPLES: &[(&str, &[Example])] = &[
    (
        "mpix-marshal",
        &[
            Example {
                line: "mpix-marshal dump particles.mxdt",
                does: "Print the tree of the type archived in particles.mxdt.",
            },
            Example {
                line: "mpix-marshal help draw",
                does: "The options of one subcommand.",
            },
        ],
    ),
    (
        "dump",
        &[
            Example {
                line: "mpix-marshal dump particles.mxdt",
                does: "Print the constructor tree, level by level.",
            },
            Example {
                line: "mpix-marshal dump --json particles.mxdt",
                does: "The same as one JSON object, for tools.",
            },
            Example {
                line: "mpix-marshal dump - < particles.mxdt",
                does: "Read the stream from standard input.",
            },
            Example {
                line: "mpix-marshal dump particles.mxdt --data particles.dat --count 10",
                does: "Print the first 10 values of a data file through the archived type.",
            },
            Example {
                line: "mpix-marshal dump particles.mxdt --data p.ext32 --datarep external32 --json",
                does: "Read data MPI-IO wrote in external32, as JSON.",
            },
        ],
    ),
    (
        "diff",
        &[
            Example {
                line: "mpix-marshal diff old.mxdt new.mxdt",
                does: "Compare at every level and explain the first difference.",
            },
            Example {
                line: "mpix-marshal diff --level signature old.mxdt new.mxdt",
                does: "Only ask whether both move the same basic types.",
            },
            Example {
                line: "mpix-marshal diff -q old.mxdt new.mxdt && echo same",
                does: "Only the exit status tells.",
            },
        ],
    ),
    (
        "check",
        &[
            Example {
                line: "mpix-marshal check particles.mxdt",
                does: "Validate the stream and rebuild the type with the local MPI.",
            },
            Example {
                line: "mpix-marshal check --no-rebuild --from external blob.bin",
                does: "Only read it, as an external stream whatever its magic word.",
            },
            Example {
                line: "mpix-marshal check --strict archive.mxdt",
                does: "Also refuse a stream that carries no checksum (written before version 5).",
            },
        ],
    ),
    (
        "convert",
        &[
            Example {
                line: "mpix-marshal convert --to compressed particles.mxdt particles.mxdz",
                does: "Rewrite an external stream compressed.",
            },
            Example {
                line: "mpix-marshal convert --to external particles.mxdi -",
                does: "Write an internal stream as external, to standard output.",
            },
        ],
    ),
    (
        "hash",
        &[
            Example {
                line: "mpix-marshal hash particles.mxdt",
                does: "The default signature hash (default64).",
            },
            Example {
                line: "mpix-marshal hash --kind all particles.mxdt",
                does: "The hash in every family, one per line.",
            },
        ],
    ),
    (
        "draw",
        &[
            Example {
                line: "mpix-marshal draw -o particles.svg particles.mxdt",
                does: "Draw the typemap of one type.",
            },
            Example {
                line: "mpix-marshal draw --width 1600 -o both.svg old.mxdt new.mxdt",
                does: "Draw two types one above the other, on one byte scale.",
            },
            Example {
                line: "mpix-marshal draw --range 0:4096 -o start.svg darray.mxdt",
                does: "Draw only bytes 0 to 4096 of a large type.",
            },
            Example {
                line: "mpix-marshal draw --period -o one.svg column.mxdt",
                does: "Draw one copy of the outermost repeated level, over one stride.",
            },
        ],
    ),
];

/// The examples of `command` (see `EXAMPLES`); none for an unknown name.
pub fn examples(command: &str) -> &'static [Example] {
    EXAMPLES
        .iter()
        .find(|(name, _)| *name == command)
        .map_or(&[], |(_, list)| list)
}

/// The examples as `--help` prints them after the options.
fn examples_help(command: &str) -> String {
    let mut text = String::from("Examples:\n");
    for e in examples(command) {
        text += &format!("  {}\n      {}\n", e.line, e.does);
    }
    text
}
