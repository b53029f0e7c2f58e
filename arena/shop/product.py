"""The catalog's product record, field for field as ShoppingBench stores it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

Service = Literal["official", "freeShipping", "COD", "flashsale"]
SERVICES: tuple[str, ...] = ("official", "freeShipping", "COD", "flashsale")


# What ``find_product`` returns per hit, in this order.
SEARCH_FIELDS: tuple[str, ...] = ("product_id", "shop_id", "title", "price", "service", "sold_count")


class Product(BaseModel):
    """One catalog product.

    ``sku_options`` maps an option index ("1", "2", ...) to that option's
    key/value pairs; ``attributes`` maps a key to its values. Both are
    lower-cased in the official catalog, which the scorer relies on.
    """

    model_config = ConfigDict(extra="ignore")
    # Set by the documents loader from the row's ``contents`` (never stored in a record).
    _row_contents: str | None = PrivateAttr(default=None)

    product_id: str
    shop_id: str = ""
    brand: str = ""
    category: str = ""
    title: str = ""
    short_description: str = ""
    description: str = ""
    specification: str = ""
    price: float = 0.0
    sold_count: int = 0
    sku_options: dict[str, dict[str, str]] = Field(default_factory=dict)
    attributes: dict[str, list[str]] = Field(default_factory=dict)
    service: list[Service] = Field(default_factory=list)
    main_image_url: str = ""
    product_url: str = ""

    @field_validator("product_id", "shop_id", mode="before")
    @classmethod
    def _ids_are_strings(cls, value: object) -> object:
        # The official files mix numeric and string ids; ids compare as text.
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(int(value))
        return value

    @field_validator("sku_options", mode="before")
    @classmethod
    def _sku_keys_are_strings(cls, value: object) -> object:
        if isinstance(value, dict):
            return {str(k): v for k, v in value.items()}
        if isinstance(value, list):  # some dumps store the options as a list
            return {str(i + 1): v for i, v in enumerate(value)}
        return value

    def search_view(self) -> dict:
        """What ``find_product`` returns per hit."""
        return search_view(self.__dict__)

    def information_view(self) -> dict:
        """What ``view_product_information`` returns (no title, price or shop, as officially)."""
        return {
            "product_id": self.product_id,
            "short_description": self.short_description,
            "description": self.description,
            "sku_options": self.sku_options,
            "attributes": self.attributes,
        }

    def contents(self) -> str:
        """The BM25 text: a documents row's own ``contents`` (the text the official index
        analyzed, whatever built it), else built as the official ``documents.jsonl`` builds
        it: the title, then the SKU values, then the attribute values."""
        if self._row_contents is not None:
            return self._row_contents
        sku_values = {v for option in self.sku_options.values() for v in option.values()}
        attr_values = {v for values in self.attributes.values() for v in values}
        return "\n".join([self.title, " ".join(sorted(sku_values)), " ".join(sorted(attr_values))])


_SEARCH_DEFAULTS = {name: Product.model_fields[name].get_default(call_default_factory=True) for name in SEARCH_FIELDS}


def search_view(fields: dict) -> dict:
    """A hit's ``find_product`` view from a product's fields: a Product's own, or a stored record
    decoded as it is (the index validated it when it was built; a field missing from an older
    record takes the Product default, as ``model_construct`` gives it)."""
    view = {name: fields.get(name, _SEARCH_DEFAULTS[name]) for name in SEARCH_FIELDS}
    view["service"] = list(view["service"])
    return view
