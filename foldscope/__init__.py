"""foldscope: which facts survive when an agent compacts its history."""
