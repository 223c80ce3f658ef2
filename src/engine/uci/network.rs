//! The network's UCI options (`Use NNUE`, `EvalFile`, `EvalArch`) and its line under `eval`.

use std::path::Path;
use std::sync::Arc;

use super::{Uci, complain, say};
use crate::nnue::Network;

impl Uci {
    /// Sets the engine's evaluator from `Use NNUE` and `EvalFile`: the network asked for,
    /// or the terms (with an `info string` saying why) when there is none.
    pub(super) fn apply_evaluator(&mut self) {
        let network = if self.use_nnue {
            match &self.eval_file {
                Some(net) => Some(net.clone()),
                None => match crate::nnue::default_network() {
                    Ok(net) => Some(net),
                    Err(e) => {
                        let text = format!("Use NNUE: {e}; evaluating with the hand-crafted terms");
                        say(&format!("info string {text}"));
                        complain(&text);
                        None
                    }
                },
            }
        } else {
            None
        };
        if let Some(engine) = self.engine.as_mut() {
            engine.set_network(network);
        }
    }

    /// `EvalFile`: a network file, or empty for the compiled-in network. A file that does
    /// not load leaves the engine with what it had, and says why.
    pub(super) fn set_eval_file(&mut self, value: &str) {
        if value.is_empty() || value == "<empty>" {
            self.eval_file = None;
            self.eval_file_asked = None;
        } else if self.bounds.is_some() {
            complain("setoption EvalFile: no file is read in a bounded session");
            return;
        } else {
            self.eval_file_asked = Some(value.to_string());
            match Network::load_as(Path::new(value), self.eval_arch.as_ref()) {
                Ok(net) => {
                    say(&format!(
                        "info string EvalFile: {value}: network of {}, checksum {:08x}",
                        net.shape(),
                        net.checksum()
                    ));
                    self.eval_file = Some(Arc::new(net));
                }
                Err(e) => {
                    let kept = match (&self.eval_file, self.use_nnue) {
                        (_, false) => "the hand-crafted evaluation stays in use",
                        (Some(_), true) => "the network loaded before stays in use",
                        (None, true) => "the compiled-in network stays in use",
                    };
                    let text = format!("EvalFile: {e}; {kept}");
                    say(&format!("info string {text}"));
                    complain(&text);
                    return;
                }
            }
        }
        self.apply_evaluator();
    }

    /// `EvalArch`: what a raw `EvalFile` does not record (`king-buckets=MAP,output-buckets=B`,
    /// `docs/NNUE.md`); empty for a plain `Chess768` net. The file asked for last is read
    /// again with it.
    pub(super) fn set_eval_arch(&mut self, value: &str) {
        let arch = if value.is_empty() || value == "<empty>" {
            None
        } else {
            match value.parse::<crate::nnue::Arch>() {
                Ok(arch) => Some(arch),
                Err(e) => {
                    let text = format!("EvalArch: {e}; the architecture stays as it was");
                    say(&format!("info string {text}"));
                    complain(&text);
                    return;
                }
            }
        };
        self.eval_arch = arch;
        if let Some(file) = self.eval_file_asked.clone() {
            self.set_eval_file(&file);
        }
    }

    /// `eval`'s last line: the network's score, in use or not.
    pub(super) fn say_network_eval(&self, engine_network: Option<Arc<Network>>) {
        // The network's view beside it: the one in use, else the one `Use NNUE` would use.
        let (network, in_use) = match engine_network {
            Some(net) => (Some(net), true),
            None => (
                self.eval_file
                    .clone()
                    .or_else(|| crate::nnue::default_network().ok()),
                false,
            ),
        };
        if let Some(net) = network {
            let position = self.board.position();
            let boards = crate::nnue::boards_of(position);
            let black = position.side_to_move() == crate::Color::Black;
            let mut nnue = crate::nnue::NnueEvaluator::new(net.clone());
            let stm = nnue.score(&boards, black, 0);
            say(&format!(
                "NNUE evaluation: {} (white side), network of {}{}",
                if black { -stm } else { stm },
                net.shape(),
                if in_use {
                    ", in use"
                } else {
                    ", not in use (Use NNUE false)"
                }
            ));
        }
    }
}
