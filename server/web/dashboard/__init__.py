"""The researchers' side of the web app: login, survey design and lifecycle, results, exports."""
