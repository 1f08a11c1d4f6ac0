//! Results that cross to Python as dicts. `record!` declares a result struct once: it describes its keys and
//! their Python types (`Record`, from which `python -m scalefront.dev.schema --write` generates the TypedDicts of
//! `_core.pyi`), and with the `python` feature it converts into that dict (its field names as keys, or the rename
//! given after `=>`; the keys of a field marked `=> flatten` inline, as the bindings have always laid them out).
//! The keys are written nowhere else.

/// Declare a result record (see the module doc): doc comments, one derive, any other attributes, then `pub`
/// fields with doc comments, each optionally followed by `=> "key"` (a rename) or `=> flatten` (a record whose
/// keys go inline).
#[macro_export]
macro_rules! record {
    (
        $(#[doc = $doc:literal])*
        #[derive($($derive:path),* $(,)?)]
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                $(#[doc = $fdoc:literal])*
                pub $field:ident : $ty:ty $(=> $key:tt)?
            ),* $(,)?
        }
    ) => {
        $(#[doc = $doc])*
        #[derive($($derive),*)]
        $(#[$meta])*
        pub struct $name {
            $( $(#[doc = $fdoc])* pub $field: $ty, )*
        }

        #[cfg(feature = "python")]
        impl<'py> pyo3::IntoPyObject<'py> for $name {
            type Target = pyo3::types::PyDict;
            type Output = pyo3::Bound<'py, pyo3::types::PyDict>;
            type Error = pyo3::PyErr;

            fn into_pyobject(self, py: pyo3::Python<'py>) -> Result<Self::Output, Self::Error> {
                use pyo3::types::PyDictMethods;
                let dict = pyo3::types::PyDict::new(py);
                $( $crate::record!(@set dict, py, self.$field, $field $(, $key)?); )*
                Ok(dict)
            }
        }

        impl $crate::records::PyHint for $name {
            fn hint() -> String {
                format!("_{}", stringify!($name))
            }
        }

        impl $crate::records::Record for $name {
            fn describe() -> $crate::records::RecordDoc {
                let mut doc = $crate::records::RecordDoc {
                    name: <Self as $crate::records::PyHint>::hint(),
                    doc: $crate::records::join_doc(&[$($doc),*]),
                    bases: Vec::new(),
                    fields: Vec::new(),
                };
                $( $crate::record!(@describe doc, $ty, $field, [$($fdoc),*] $(, $key)?); )*
                doc
            }
        }
    };
    (@set $dict:ident, $py:ident, $value:expr, $field:ident) => {
        $dict.set_item(stringify!($field), $value)?
    };
    (@set $dict:ident, $py:ident, $value:expr, $field:ident, flatten) => {
        $dict.update(pyo3::IntoPyObject::into_pyobject($value, $py)?.as_mapping())?
    };
    (@set $dict:ident, $py:ident, $value:expr, $field:ident, $key:literal) => {
        $dict.set_item($key, $value)?
    };
    (@describe $doc:ident, $ty:ty, $field:ident, [$($fdoc:literal),*]) => {
        $doc.fields.push($crate::records::FieldDoc {
            key: stringify!($field),
            hint: <$ty as $crate::records::PyHint>::hint(),
            doc: $crate::records::join_doc(&[$($fdoc),*]),
        })
    };
    (@describe $doc:ident, $ty:ty, $field:ident, [$($fdoc:literal),*], flatten) => {
        $doc.bases.push(<$ty as $crate::records::PyHint>::hint())
    };
    (@describe $doc:ident, $ty:ty, $field:ident, [$($fdoc:literal),*], $key:literal) => {
        $doc.fields.push($crate::records::FieldDoc {
            key: $key,
            hint: <$ty as $crate::records::PyHint>::hint(),
            doc: $crate::records::join_doc(&[$($fdoc),*]),
        })
    };
}

/// Values by name, in order: a dict in Python (the cost breakdown's components).
#[derive(Clone, Debug, PartialEq)]
pub struct NamedValues(pub Vec<(&'static str, f64)>);

/// A column of values: a numpy array in Python that takes ownership of the vector (Monte Carlo outcomes).
#[derive(Clone, Debug, PartialEq)]
pub struct Column<T>(pub Vec<T>);

/// The Python type a value converts to, as a stub annotation.
pub trait PyHint {
    fn hint() -> String;
}

crate::record! {
    /// A record's description for the generated stubs: its TypedDict's name and doc, the records whose keys it
    /// inlines, and its own keys in order.
    #[derive(Clone, Debug, PartialEq)]
    pub struct RecordDoc {
        pub name: String,
        pub doc: String,
        pub bases: Vec<String>,
        pub fields: Vec<FieldDoc>,
    }
}

crate::record! {
    /// One key of a record: its name, its stub annotation and its doc.
    #[derive(Clone, Debug, PartialEq)]
    pub struct FieldDoc {
        pub key: &'static str,
        pub hint: String,
        pub doc: String,
    }
}

/// A struct declared with `record!`.
pub trait Record: PyHint {
    fn describe() -> RecordDoc;
}

/// Doc-comment lines (each with its leading space) as one text.
pub fn join_doc(lines: &[&str]) -> String {
    lines.iter().map(|l| l.strip_prefix(' ').unwrap_or(l)).collect::<Vec<_>>().join("\n")
}

macro_rules! hint {
    ($text:literal: $($t:ty),+) => {
        $(impl PyHint for $t {
            fn hint() -> String {
                $text.to_string()
            }
        })+
    };
}
hint!("float": f64);
hint!("int": u32, u64, i64, usize);
hint!("bool": bool);
hint!("str": String, &'static str);

impl<T: PyHint> PyHint for Vec<T> {
    fn hint() -> String {
        format!("list[{}]", T::hint())
    }
}

impl<T: PyHint> PyHint for Option<T> {
    fn hint() -> String {
        format!("{} | None", T::hint())
    }
}

impl<T: PyHint, const N: usize> PyHint for [T; N] {
    fn hint() -> String {
        format!("list[{}]", T::hint())
    }
}

impl PyHint for NamedValues {
    fn hint() -> String {
        "dict[str, float]".into()
    }
}

/// A numpy element type by its name in `numpy` (the stubs import numpy as np).
pub trait Dtype {
    const NAME: &'static str;
}
impl Dtype for f64 {
    const NAME: &'static str = "float64";
}
impl Dtype for u32 {
    const NAME: &'static str = "uint32";
}

impl<T: Dtype> PyHint for Column<T> {
    fn hint() -> String {
        format!("npt.NDArray[np.{}]", T::NAME)
    }
}

/// The conversions into (and, for columns, from) Python.
#[cfg(feature = "python")]
mod python {
    use numpy::{IntoPyArray, PyArray1};
    use pyo3::prelude::*;
    use pyo3::types::PyDict;

    use super::{Column, Dtype, NamedValues};

    impl<'py> IntoPyObject<'py> for NamedValues {
        type Target = PyDict;
        type Output = Bound<'py, PyDict>;
        type Error = PyErr;

        fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
            let dict = PyDict::new(py);
            for (name, value) in self.0 {
                dict.set_item(name, value)?;
            }
            Ok(dict)
        }
    }

    macro_rules! column_from_python {
        ($($t:ty),+) => {
            $(impl<'a, 'py> FromPyObject<'a, 'py> for Column<$t> {
                type Error = PyErr;

                fn extract(obj: pyo3::Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
                    Ok(Column(obj.extract()?))
                }
            })+
        };
    }
    column_from_python!(f64, u32);

    impl<'py, T: Dtype + numpy::Element> IntoPyObject<'py> for Column<T> {
        type Target = PyArray1<T>;
        type Output = Bound<'py, PyArray1<T>>;
        type Error = PyErr;

        fn into_pyobject(self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<T>>> {
            Ok(self.0.into_pyarray(py))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::record! {
        /// A part.
        #[derive(Clone, Debug)]
        pub struct Part {
            /// Its count.
            pub count: u64,
            pub sizes: [f64; 3],
        }
    }

    crate::record! {
        /// A part in a quote.
        #[derive(Clone, Debug)]
        pub struct Line {
            pub part: Part => flatten,
            pub usd: f64 => "price_usd",
            pub by_year: NamedValues,
            pub samples: Column<u32>,
        }
    }

    #[test]
    fn a_record_is_a_plain_struct_of_its_fields() {
        let part = Part { count: 2, sizes: [1.0, 2.0, 3.0] };
        let line = Line { part, usd: 5.0, by_year: NamedValues(vec![("2027", 1.5)]), samples: Column(vec![7]) };
        assert_eq!((line.part.count, line.part.sizes[2], line.usd), (2, 3.0, 5.0));
        assert_eq!((line.by_year.0[0], line.samples.0[0]), (("2027", 1.5), 7));
    }

    #[test]
    fn a_record_describes_its_keys_renames_and_inlined_records() {
        let part = Part::describe();
        assert_eq!((part.name.as_str(), part.doc.as_str()), ("_Part", "A part."));
        let keys: Vec<_> = part.fields.iter().map(|f| (f.key, f.hint.as_str(), f.doc.as_str())).collect();
        assert_eq!(keys, [("count", "int", "Its count."), ("sizes", "list[float]", "")]);
        let line = Line::describe();
        assert_eq!(line.bases, ["_Part"]);
        let keys: Vec<_> = line.fields.iter().map(|f| (f.key, f.hint.as_str())).collect();
        assert_eq!(
            keys,
            [("price_usd", "float"), ("by_year", "dict[str, float]"), ("samples", "npt.NDArray[np.uint32]")]
        );
        assert_eq!(<Vec<Line> as PyHint>::hint(), "list[_Line]");
    }
}
