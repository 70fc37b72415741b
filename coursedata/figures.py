"""Show a figure with its description, so that a screen reader reads what a sighted student sees.

JupyterLab's and JupyterLite's image renderer writes an ``<img>`` with no ``alt`` for a figure's
``image/png`` output (``renderImage`` in ``@jupyterlab/rendermime``), and the kernel never sees a
cell's metadata. :func:`show_figure` therefore sends the description with the figure itself, in
one display: the PNG, an HTML ``<img>`` carrying the description as its ``alt`` (the front ends
prefer ``text/html`` to ``image/png``: JupyterLab, JupyterLite, nbconvert, myst-nb), the PNG's
``alt`` metadata, and the description as the plain-text form for text-only front ends.
"""

from __future__ import annotations

import base64
import html
import io


def figure_bundle(png: bytes, description: str) -> tuple[dict[str, str], dict[str, dict]]:
    """The display data and metadata of a PNG figure described by ``description``.

    Parameters
    ----------
    png : bytes
        The figure, as a PNG file.
    description : str
        What the figure shows, in at least a sentence.

    Returns
    -------
    tuple of dict
        The MIME bundle (``image/png``, ``text/html``, ``text/plain``) and its metadata.
    """
    if not description or not description.strip():
        raise ValueError("a figure needs a description of what it shows")
    data = base64.b64encode(png).decode("ascii")
    alt = html.escape(description, quote=True)
    bundle = {"image/png": data,
              "text/html": f'<img src="data:image/png;base64,{data}" alt="{alt}">',
              "text/plain": f"Figure: {description}"}
    return bundle, {"image/png": {"alt": description}}


def show_figure(description: str, fig=None) -> None:
    """Show ``fig`` (the current figure when None) with ``description`` as its text alternative,
    then close it, in place of ``plt.show()``.

    Parameters
    ----------
    description : str
        What the figure shows, in at least a sentence.
    fig : matplotlib.figure.Figure, optional
        The figure to show; the current one when omitted.
    """
    import matplotlib.pyplot as plt
    from IPython.display import display

    fig = fig if fig is not None else plt.gcf()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", bbox_inches="tight")
    plt.close(fig)
    bundle, metadata = figure_bundle(buffer.getvalue(), description)
    display(bundle, raw=True, metadata=metadata)
