//! The lab's components. Each reads the [`state::Lab`] from context.

pub mod controls;
pub mod lesson;
pub mod panes;
pub mod state;
pub mod topology;
