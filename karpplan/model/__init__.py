"""The Kubernetes objects karpplan reads (pods, NodePools, nodes, storage...) as frozen dataclasses, and their
builders."""
