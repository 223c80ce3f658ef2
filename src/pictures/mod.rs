//! Pictures: boards with masks and arrows, evaluation charts (`svg`), and the one-page
//! report of a DB (`report`).

pub mod report;
pub mod svg;
