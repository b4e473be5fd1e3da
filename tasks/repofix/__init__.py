"""RepoFix: fix one bug in a tiny Python repository from an issue; hidden tests grade the fix."""
