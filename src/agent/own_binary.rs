//! On a host, `perflab` in a command the controller sends (a target `perflab serve …`, an exec
//! `perflab load …`) is the agent's own binary: the one the controller checked the version of, and
//! the one `perflab hosts install` put in the per-version cache, which is on no PATH.

use crate::remote::protocol::CommandSpec;

/// Point `perflab` in `command` at the agent's own binary: `argv[0]` is replaced; a shell string
/// that starts with `perflab` finds it first on its `PATH` (set in `env`, which the command is
/// started with).
pub fn use_own_perflab(command: &mut CommandSpec, env: &mut Vec<(String, String)>) {
    let Ok(me) = std::env::current_exe() else {
        return;
    };
    match command {
        CommandSpec::Argv(argv) => {
            if argv.first().is_some_and(|a| a == "perflab") {
                argv[0] = me.display().to_string();
            }
        }
        CommandSpec::Shell(s) => {
            if s.split_whitespace().next() != Some("perflab") {
                return;
            }
            let Some(dir) = me.parent() else { return };
            let path = match env.iter().position(|(k, _)| k == "PATH") {
                Some(i) => env.remove(i).1,
                None => std::env::var("PATH").unwrap_or_default(),
            };
            let path = if path.is_empty() {
                dir.display().to_string()
            } else {
                format!("{}:{path}", dir.display())
            };
            env.push(("PATH".into(), path));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perflab_is_this_binary() {
        let me = std::env::current_exe().expect("exe");
        let mut argv = CommandSpec::Argv(vec!["perflab".into(), "serve".into()]);
        let mut env = Vec::new();
        use_own_perflab(&mut argv, &mut env);
        assert_eq!(argv, CommandSpec::Argv(vec![me.display().to_string(), "serve".into()]));
        assert!(env.is_empty());
        let mut other = CommandSpec::Argv(vec!["/usr/bin/perflab".into()]);
        use_own_perflab(&mut other, &mut env);
        assert_eq!(other, CommandSpec::Argv(vec!["/usr/bin/perflab".into()]), "a path is the user's");
        let mut shell = CommandSpec::Shell("perflab serve --port 1".into());
        let mut env = vec![("PATH".to_string(), "/opt/bin".to_string())];
        use_own_perflab(&mut shell, &mut env);
        let dir = me.parent().expect("dir").display().to_string();
        assert_eq!(env, vec![("PATH".to_string(), format!("{dir}:/opt/bin"))]);
    }
}
