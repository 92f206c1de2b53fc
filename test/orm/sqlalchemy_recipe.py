"""The SQLAlchemy recipe of docs/orms.md, run with the SQLAlchemy installed.

Connects with libpq's environment (PGHOST, PGPORT, PGDATABASE, PGUSER) to a
database where uidgen is created and uidgen.worker_id is set; prints one
JSON object of facts that test/t/170_orm_recipes.pl checks.  Works with
SQLAlchemy 1.4 (Debian 12) and 2.0 (Debian 13).
"""
import json
import sys

import sqlalchemy
from sqlalchemy import BigInteger, Column, Text, create_engine, select, text
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.orm import Session, declarative_base

Base = declarative_base()


class Order(Base):
    """The recipe's snowflake key."""
    __tablename__ = "sa_orders"
    id = Column(BigInteger, primary_key=True, autoincrement=False,
                server_default=text("snowflake_next()"))
    item = Column(Text, nullable=False)


class Document(Base):
    """The recipe's UUIDv7 key."""
    __tablename__ = "sa_documents"
    id = Column(UUID(as_uuid=True), primary_key=True,
                server_default=text("uuidv7_next()"))
    title = Column(Text, nullable=False)


class LegacyOrder(Base):
    """A table made by SQLAlchemy with its usual BIGSERIAL key, converted."""
    __tablename__ = "sa_legacy_orders"
    id = Column(BigInteger, primary_key=True)
    item = Column(Text, nullable=False)


def main():
    engine = create_engine("postgresql+psycopg2://", future=True)
    facts = {"sqlalchemy": sqlalchemy.__version__}
    Base.metadata.drop_all(engine)
    Base.metadata.create_all(engine)
    with engine.connect() as conn:
        facts["orders_default"] = conn.execute(text(
            "SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef "
            "WHERE adrelid = 'sa_orders'::regclass")).scalar()
        facts["documents_default"] = conn.execute(text(
            "SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef "
            "WHERE adrelid = 'sa_documents'::regclass")).scalar()
        facts["worker_id"] = int(conn.execute(text(
            "SELECT current_setting('uidgen.worker_id')")).scalar())

    # the legacy table gets rows with its BIGSERIAL, then is converted
    with Session(engine) as session:
        session.add_all([LegacyOrder(item="old %d" % i) for i in range(100)])
        session.commit()
        session.execute(text("SELECT convert_to_snowflake('sa_legacy_orders', 'id')"))
        session.commit()

    with Session(engine) as session:
        orders = [Order(item="order %d" % i) for i in range(50)]
        docs = [Document(title="doc %d" % i) for i in range(50)]
        legacy = [LegacyOrder(item="new %d" % i) for i in range(50)]
        # one at a time, so that each flush is an INSERT ... RETURNING of one row
        for obj in orders + docs + legacy:
            session.add(obj)
            session.flush()
        session.commit()
        order_ids = [o.id for o in orders]
        doc_ids = [d.id for d in docs]
        legacy_ids = [o.id for o in legacy]
        old_max = session.execute(select(sqlalchemy.func.max(LegacyOrder.id))
                                  .where(LegacyOrder.item.like("old %"))).scalar()
        workers = session.execute(text(
            "SELECT array_agg(DISTINCT snowflake_worker(id)) FROM sa_orders")).scalar()

    facts["orders_ids_read_back"] = all(isinstance(i, int) and i > 0 for i in order_ids)
    facts["orders_increasing"] = order_ids == sorted(set(order_ids))
    facts["orders_workers"] = workers
    facts["documents_uuid_version_7"] = all(d.version == 7 for d in doc_ids)
    facts["documents_increasing"] = doc_ids == sorted(set(doc_ids))
    facts["legacy_new_above_old"] = min(legacy_ids) > old_max
    facts["legacy_old_max"] = old_max
    json.dump(facts, sys.stdout, default=str)
    print()


if __name__ == "__main__":
    main()
