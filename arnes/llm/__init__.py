"""Model providers behind one protocol (base.py); factory.py builds one, importing its SDK only then."""
