"""The order of the gallery's examples: from a first pipeline to serving it."""

#: File names in the order a reader meets them; any other example follows, by name.
ORDER = (
    "plot_quick_start.py",
    "plot_risk_weight.py",
    "plot_audit_catalogue.py",
    "plot_explain.py",
    "plot_custom_registry.py",
    "ultratool_grid_search.py",
)


class ExampleOrder:
    """sphinx-gallery ``within_subsection_order`` key: the position in :data:`ORDER`.

    Parameters
    ----------
    src_dir : str
        The gallery's source directory (sphinx-gallery passes it; unused).
    """

    def __init__(self, src_dir):
        self.src_dir = src_dir

    def __repr__(self):
        # sphinx-gallery records the key in its configuration by repr.
        return "ExampleOrder"

    def __call__(self, filename):
        """Sort key of one example file name."""
        return (ORDER.index(filename) if filename in ORDER else len(ORDER), filename)
