//! `mpix-marshal`: look at archived MPI datatypes. Subcommands dump, diff,
//! check, convert, hash and draw (see the library part, lib.rs); errors are
//! messages with an exit status (0 success or equal, 1 different or
//! invalid, 2 error), never a panic.

use clap::Parser;
use mpix_marshal_cli::{cli::Cli, run, TROUBLE};
use std::process::ExitCode;

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
