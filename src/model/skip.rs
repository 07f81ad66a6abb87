//! What a run could not do, said once: the notes written for a matrix point that this machine cannot
//! honour (`skip_unsupported`) and for a variant whose `skip_unless` check failed. They are kept in
//! the store as text (`meta.notes`, beside notes of other kinds) and read back by the report's
//! summary, which names the skipped points by reason.

/// The note for a point skipped here: "skipped cpus=4 requests=10: cpus = 4 cannot be honoured: ...".
pub fn point_note(label: &str, why: &str) -> String {
    format!("skipped {label}: {why}")
}

/// The note for a variant skipped with its points: "variant after skipped (2 point(s) not run): why".
pub fn variant_note(name: &str, points: usize, why: &str) -> String {
    format!("variant {name} skipped ({points} point(s) not run): {why}")
}

/// A note read back: a skipped point's label and reason, or a skipped variant (its note says it
/// whole); None for a note of another kind.
#[derive(Debug, PartialEq, Eq)]
pub enum Skipped<'a> {
    Point { label: &'a str, why: &'a str },
    Variant,
}

pub fn read(note: &str) -> Option<Skipped<'_>> {
    if let Some((label, why)) = note.strip_prefix("skipped ").and_then(|r| r.split_once(": ")) {
        return Some(Skipped::Point { label, why });
    }
    let (name, rest) = note.strip_prefix("variant ")?.split_once(" skipped (")?;
    (!name.is_empty() && rest.contains(" point(s) not run): ")).then_some(Skipped::Variant)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_note_reads_back_as_what_was_skipped_and_other_notes_as_none() {
        let why = "cpus = 4 cannot be honoured: this machine has 2 online CPU(s) (0,1)";
        assert_eq!(
            read(&point_note("cpus=4 requests=10", why)),
            Some(Skipped::Point {
                label: "cpus=4 requests=10",
                why
            })
        );
        assert_eq!(read(&variant_note("after", 2, "needs root: exit 1")), Some(Skipped::Variant));
        assert_eq!(read("run b has plan \"x\", not \"y\": pooled anyway"), None);
        assert_eq!(read("variant notes are kept"), None);
    }
}
