//! The `pawnstorm` binary: parses the command line and hands each command to its file in
//! `cli/`. A closed standard output (`| head`) ends any command quietly with status 0.

mod cli;

use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, Command, Global};

fn main() -> ExitCode {
    let args = Cli::parse();
    let global = Global {
        scalar: args.scalar,
        verify: if args.no_verify {
            pawnstorm::db::Verify::Off
        } else {
            pawnstorm::db::Verify::Checksums
        },
    };
    // Commands that write files end on SIGINT/SIGTERM without leaving temporary files
    // (label keeps what it has labelled and handles the signals itself; the UCI loop and
    // the readers write nothing).
    let writes_files = matches!(
        args.command,
        Some(
            Command::Import(_)
                | Command::Export(_)
                | Command::Features(_)
                | Command::Eval(_)
                | Command::Weights(_)
                | Command::Tune(_)
                | Command::TrainNet(_)
                | Command::Split(_)
                | Command::Merge(_)
                | Command::Dedup(_)
                | Command::Datagen(_)
        )
    );
    if writes_files && let Err(e) = pawnstorm::io::durable::remove_pending_on_signals() {
        eprintln!("error: installing the signal handlers: {e}");
        return ExitCode::FAILURE;
    }
    let outcome = match args.command {
        Some(Command::Import(args)) => cli::import::run(args),
        Some(Command::Info(args)) => cli::info::run(args, global),
        Some(Command::Export(args)) => cli::export::run(args, global),
        Some(Command::Features(args)) => cli::features::run(args, global),
        Some(Command::Eval(args)) => cli::eval::run(args, global),
        Some(Command::Weights(args)) => cli::weights::run(args),
        Some(Command::Tune(args)) => cli::tune::run(args, global),
        Some(Command::TrainNet(args)) => cli::train_net::run(args, global),
        Some(Command::Show(args)) => cli::show::run(args, global),
        Some(Command::Report(args)) => cli::report::run(args, global),
        Some(Command::Split(args)) => cli::split::run(args, global),
        Some(Command::Merge(args)) => cli::merge::run(args, global),
        Some(Command::Dedup(args)) => cli::dedup::run(args, global),
        Some(Command::Perft(args)) => cli::perft::run(args),
        Some(Command::Bench(args)) => cli::bench::run(args),
        Some(Command::Datagen(args)) => cli::datagen::run(args),
        Some(Command::Label(args)) => cli::label::run(args, global),
        // No subcommand is how a GUI starts an engine.
        Some(Command::Uci(args)) => cli::uci::run(args),
        None => cli::uci::run(cli::uci::Args::default()),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away (`| head`): its choice, not a failure to report.
        Err(e) if cli::output::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
