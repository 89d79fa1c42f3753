//! `mpix-marshal`: look at archived MPI datatypes. Subcommands dump, diff,
//! check, convert, hash and draw (cli.rs); each reads streams through
//! input.rs, asks the local MPI only through mpi.rs, and reports errors as
//! messages with an exit status (0 success or equal, 1 different or
//! invalid, 2 error), never as a panic.

mod check;
mod cli;
mod convert;
mod describe;
mod diff;
mod draw;
mod dump;
mod error;
mod hash;
mod input;
mod mpi;

use clap::Parser;
use cli::{Cli, Command};
use error::Result;
use std::process::ExitCode;

/// Exit statuses, as diff(1) has them.
const SAME: u8 = 0;
const DIFFERENT: u8 = 1;
const TROUBLE: u8 = 2;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A bug must still end in a message, not a stack trace.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("mpix-marshal: internal error ({info}); please report it");
    }));
    match std::panic::catch_unwind(|| run(cli.command)) {
        Ok(Ok(code)) => ExitCode::from(code),
        Ok(Err(e)) => {
            eprintln!("mpix-marshal: {e}");
            ExitCode::from(TROUBLE)
        }
        Err(_) => ExitCode::from(TROUBLE),
    }
}

fn print(text: &str) -> Result<()> {
    convert::write_out(std::path::Path::new("-"), text.as_bytes())
}

fn run(command: Command) -> Result<u8> {
    // MPI answers for extents and rebuilding, and knows this build's id
    // (internal streams): start it once for every subcommand.
    let _mpi = mpi::Session::start()?;
    match command {
        Command::Dump(a) => {
            let s = input::open(&a.input.file, a.reading.from)?;
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
            match check::verdict(&s, !a.no_rebuild) {
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
            let svg = draw::svg(&streams, a.width)?;
            convert::write_out(&a.output, svg.as_bytes())?;
            Ok(SAME)
        }
    }
}
