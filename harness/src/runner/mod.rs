pub mod outcome;
