"""Self-contained HTML pages (no network: styles and the one small script are inline) for reports
people look at: eval pass rates and team timelines."""
