"""The conflicts analysis (kubectl_fieldown/conflicts): the plan of an apply and its report."""
