//! The `mpix-marshal` command as a library, so that its tests can check its
//! parts (the typemap structure `draw` builds) against MPI directly. The
//! binary (main.rs) parses the command line and calls [`run`]. Modules:
//! `cli` (the command line), `input` (reading streams), `mpi` (the only MPI
//! calls), and one module per subcommand; a node in words is the
//! library's `mpix_marshal::describe`.

pub mod check;
pub mod cli;
pub mod convert;
pub mod data;
pub mod diff;
pub mod draw;
pub mod dump;
pub mod error;
pub mod hash;
pub mod input;
pub mod mpi;

use cli::Command;
use error::Result;

/// Exit statuses, as diff(1) has them.
pub const SAME: u8 = 0;
pub const DIFFERENT: u8 = 1;
pub const TROUBLE: u8 = 2;

fn print(text: &str) -> Result<()> {
    convert::write_out(std::path::Path::new("-"), text.as_bytes())
}

/// `dump --data`: the elements as lines, or one JSON array, as they are
/// read; an incomplete element ends the output with an error (status 2).
fn dump_data(s: &input::Stream, data_path: &std::path::Path, a: &cli::DumpArgs) -> Result<u8> {
    use std::io::Write;
    let bytes = input::read_bytes(data_path)?;
    let opt = data::Options {
        offset: a.offset,
        count: a.count,
        rep: match a.datarep {
            cli::DatarepArg::Native => data::values::Datarep::Native,
            cli::DatarepArg::External32 => data::values::Datarep::External32,
        },
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let io = |source| error::Error::Io {
        path: "-".into(),
        source,
    };
    let mut items = Vec::new();
    let read = data::read(s, &bytes, data_path, opt, &mut |e| {
        if a.json {
            items.push(data::json(&e));
            Ok(())
        } else {
            out.write_all(data::line(&e).as_bytes()).map_err(io)
        }
    });
    if a.json {
        let j = serde_json::Value::Array(items);
        writeln!(out, "{j:#}").map_err(io)?;
    }
    out.flush().map_err(io)?;
    read.map(|()| SAME)
}

/// Runs one subcommand: its exit status, or the error to report (status 2).
pub fn run(command: Command) -> Result<u8> {
    // MPI answers for extents and rebuilding, and knows this build's id
    // (internal streams): start it once for every subcommand.
    let _mpi = mpi::Session::start()?;
    match command {
        Command::Dump(a) => {
            let s = input::open(&a.input.file, a.reading.from)?;
            if let Some(data_path) = &a.data {
                return dump_data(&s, data_path, &a);
            }
            if a.json {
                let j = dump::json(&s);
                print(&format!("{j:#}\n"))?;
            } else {
                print(&dump::text(&s))?;
            }
            Ok(SAME)
        }
        Command::Diff(a) => {
            let sa = input::open(&a.a, None)?;
            let sb = input::open(&a.b, None)?;
            let level = diff::level(a.level);
            match diff::compare(&sa, &sb, level)? {
                None => {
                    if !a.quiet {
                        print(&format!("equal up to the {} level\n", level.name()))?;
                    }
                    Ok(SAME)
                }
                Some(explanation) => {
                    if !a.quiet {
                        print(&format!("{explanation}\n"))?;
                    }
                    Ok(DIFFERENT)
                }
            }
        }
        Command::Check(a) => {
            let s = match input::open(&a.input.file, a.reading.from) {
                Ok(s) => s,
                Err(e) if e.is_invalid_stream() => {
                    eprintln!("mpix-marshal: invalid: {e}");
                    return Ok(DIFFERENT);
                }
                Err(e) => return Err(e),
            };
            match check::verdict(&s, !a.no_rebuild, a.strict) {
                check::Verdict::Valid(msg) | check::Verdict::ValidNotHere(msg) => {
                    print(&format!("{msg}\n"))?;
                    Ok(SAME)
                }
                check::Verdict::Invalid(e) => {
                    eprintln!("mpix-marshal: invalid: {e}");
                    Ok(DIFFERENT)
                }
            }
        }
        Command::Convert(a) => {
            let s = input::open(&a.input, a.reading.from)?;
            let bytes = convert::bytes(&s, a.to)?;
            convert::write_out(&a.output, &bytes)?;
            Ok(SAME)
        }
        Command::Hash(a) => {
            let s = input::open(&a.input.file, a.reading.from)?;
            print(&hash::text(&s, a.kind)?)?;
            Ok(SAME)
        }
        Command::Draw(a) => {
            let streams = a
                .files
                .iter()
                .map(|f| input::open(f, a.reading.from))
                .collect::<Result<Vec<_>>>()?;
            let view = match (a.range, a.period) {
                (Some((lo, hi)), _) => draw::View::Range(lo, hi),
                (None, true) => draw::View::Period,
                (None, false) => draw::View::Whole,
            };
            let svg = draw::svg(&streams, a.width, view)?;
            convert::write_out(&a.output, svg.as_bytes())?;
            Ok(SAME)
        }
    }
}
